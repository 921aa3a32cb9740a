"""Time ``xlacli diff-hlo`` beside parse-only and GNU diff on the benchmark inputs.

    python benchmarks/hlo_diff/make_inputs.py   # once: writes benchmarks/.work/hlo_diff/
    python benchmarks/hlo_diff/run.py [--repeats 7]

Each command runs as a fresh process (start-up included, as a user sees it)
``--repeats`` times; the table shows medians, peak memory of the diff-hlo
process, and the ratios to parse-only and to GNU ``diff`` (the floor of a
plain line diff, which cannot tell renumbering from change).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent.parent / ".work" / "hlo_diff"
PAIRS = ("renumbered", "reordered", "renamed", "one_layer")
# The growth pair (make_inputs.py --large-layers 40): base.after beside it gives 30k -> 100k.
LARGE = ("large", "large_renamed")
PARSE_ONLY = (
    "import sys; from xlacli.hlo import parse_hlo_file; [parse_hlo_file(p) for p in sys.argv[1:]]"
)


def timed(command: list[str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in KiB and exit status of one run of ``command``."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    error = process.stderr.read().decode() if process.stderr else ""
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{error}")
    return elapsed, usage.ru_maxrss, process.returncode


def median_of(command: list[str], repeats: int) -> tuple[float, int, int]:
    runs = [timed(command) for _ in range(repeats)]
    return (
        statistics.median(run[0] for run in runs),
        max(run[1] for run in runs),
        runs[0][2],
    )


def count_lines(command: list[str]) -> int:
    result = subprocess.run(command, capture_output=True, check=False)
    return result.stdout.count(b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--stage", choices=("before", "after"), default="after")
    parser.add_argument("--work", type=Path, default=WORK, help=f"default: {WORK}")
    args = parser.parse_args()
    base = args.work / f"base.{args.stage}.txt"
    if not base.exists():
        raise SystemExit(f"{base} is missing: run benchmarks/hlo_diff/make_inputs.py first")
    python = sys.executable
    print(
        f"inputs: {base.stat().st_size / 1e6:.1f} MB, {args.stage} optimizations, "
        f"median of {args.repeats} runs, {os.cpu_count()} CPUs\n"
    )
    print(
        "| pair | exit | diff-hlo | peak memory | memory / input | parse only | "
        "GNU diff | diff lines | diff-hlo / parse | diff-hlo / diff |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    pairs = [(base, args.work / f"{name}.{args.stage}.txt") for name in PAIRS]
    large = [args.work / f"{name}.after.txt" for name in LARGE]
    if args.stage == "after" and all(path.exists() for path in large):
        pairs.append((large[0], large[1]))
    for left, other in pairs:
        name = other.name.split(".")[0] if left == base else f"{left.name} ↔ {other.name}"
        paths = [str(left), str(other)]
        input_kib = (left.stat().st_size + other.stat().st_size) / 1024
        ours, peak, code = median_of([python, "-m", "xlacli", "diff-hlo", *paths], args.repeats)
        parse, _, _ = median_of([python, "-c", PARSE_ONLY, *paths], args.repeats)
        line_diff, _, _ = median_of(["diff", *paths], args.repeats)
        lines = count_lines(["diff", *paths])
        print(
            f"| {name if left != base else 'base ↔ ' + name} | {code} | {ours:.2f} s | "
            f"{peak / 1024:.0f} MB | "
            f"{peak / input_kib:.1f}× | {parse:.2f} s | {line_diff:.3f} s | {lines:,} | "
            f"{ours / parse:.2f} | {ours / line_diff:.0f} |"
        )


if __name__ == "__main__":
    main()
