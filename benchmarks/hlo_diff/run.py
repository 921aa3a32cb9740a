"""Time ``xlacli diff-hlo`` beside parse-only and GNU diff on the benchmark inputs.

    python benchmarks/hlo_diff/make_inputs.py --large-layers 4 24 40   # once (about 8 min)
    python benchmarks/hlo_diff/run.py [--repeats 7]

Each command runs as a fresh process (start-up included, as a user sees it)
``--repeats`` times; the table shows medians, peak memory of the diff-hlo
process, and the ratios to parse-only and to GNU ``diff`` (the floor of a
plain line diff, which cannot tell renumbering from change). With the
``layers<N>`` pairs present, the largest joins the table and a second table
shows the growth from 11k to 124k instructions.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

WORK = Path(__file__).resolve().parent.parent / ".work" / "hlo_diff"
PAIRS = ("renumbered", "reordered", "renamed", "one_layer")
# The growth pairs (make_inputs.py --large-layers 4 24 40): with the 12-layer ``base`` and
# ``renamed``, 11k to 124k instructions.
GROWTH = "layers*_renamed.after.txt"
_INSTRUCTION = re.compile(rb"^\s*(?:ROOT\s+)?%[\w.\-]+ = ", re.MULTILINE)
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
    growth = growth_pairs(args.work) if args.stage == "after" else []
    if growth:
        pairs.append(growth[-1])
    for left, other in pairs:
        name = f"base ↔ {_stem(other)}" if left == base else f"{_stem(left)} ↔ {_stem(other)}"
        paths = [str(left), str(other)]
        input_kib = (left.stat().st_size + other.stat().st_size) / 1024
        ours, peak, code = median_of([python, "-m", "xlacli", "diff-hlo", *paths], args.repeats)
        parse, _, _ = median_of([python, "-c", PARSE_ONLY, *paths], args.repeats)
        line_diff, _, _ = median_of(["diff", *paths], args.repeats)
        lines = count_lines(["diff", *paths])
        print(
            f"| {name} | {code} | {ours:.2f} s | {peak / 1024:.0f} MB | "
            f"{peak / input_kib:.1f}× | {parse:.2f} s | {line_diff:.3f} s | {lines:,} | "
            f"{ours / parse:.2f} | {ours / line_diff:.0f} |"
        )
    if growth:
        print_growth([(base, args.work / "renamed.after.txt"), *growth], args.repeats)


def growth_pairs(work: Path) -> list[tuple[Path, Path]]:
    """The ``layers<N>`` pairs present, smallest first."""
    renamed = sorted(work.glob(GROWTH), key=lambda path: int(re.sub(r"\D", "", path.name)))
    return [(path.with_name(path.name.replace("_renamed", "")), path) for path in renamed]


def print_growth(pairs: list[tuple[Path, Path]], repeats: int) -> None:
    """diff-hlo's wall time on renamed pairs of growing size, beside GNU diff."""
    print(
        "\n| renamed pair | instructions per side | size per side | diff-hlo | per 10k "
        "instructions | GNU diff |"
    )
    print("|---|---|---|---|---|---|")
    python = sys.executable
    for left, right in sorted(pairs, key=lambda pair: pair[0].stat().st_size):
        count = len(_INSTRUCTION.findall(left.read_bytes()))
        ours, _, _ = median_of([python, "-m", "xlacli", "diff-hlo", str(left), str(right)], repeats)
        line_diff, _, _ = median_of(["diff", str(left), str(right)], repeats)
        print(
            f"| {_stem(left)} ↔ {_stem(right)} | {count:,} | {left.stat().st_size / 1e6:.1f} MB"
            f" | {ours:.2f} s | {ours / count * 1e4:.3f} s | {line_diff:.3f} s |"
        )


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


if __name__ == "__main__":
    main()
