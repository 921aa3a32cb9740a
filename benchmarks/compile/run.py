"""Wall time of ``xlacli compile`` against a bare torch_xla loop, side by side.

    python benchmarks/compile/run.py [--repeats 5] [--steps 2] [--models examples/transformer.py]

Both run the same model for the same steps on XLA:CPU, alternating, each in a
fresh process (torch and torch_xla imports included, as a user sees them).
Prints the medians, their ratio and the median of the pairs' ratios (goal:
at most 1.10; issue 40: 1.03 for 10 steps of ``examples/mlp.py``).

Start-up is measured apart, from the command's start: when xlacli's child
process exists (``/proc``, polled), and when torch_xla is imported: the
child's first event (``events.jsonl``), the bare loop's mark
(``bare_loop.py``'s ``XLACLI_BENCH_MARK`` file). The load average is printed
beside each model's row.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)

MODELS = ("examples/mlp.py", "examples/transformer.py")
MARK_ENV = "XLACLI_BENCH_MARK"  # bare_loop.py writes a line there once torch_xla is imported
_POLL_S = 0.005


@dataclass
class Timing:
    """One side's runs: wall times, and when each run reached its start-up marks."""

    wall: list[float] = field(default_factory=list)
    child_started: list[float] = field(default_factory=list)  # xlacli only
    imported: list[float] = field(default_factory=list)  # torch_xla imported


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=installed_env())
    return time.perf_counter() - started


def watched(command: list[str], imported_file: Path) -> tuple[float, float | None, float | None]:
    """Wall time of ``command``, when its first child process appeared, and when
    ``imported_file`` got its first line (each from the command's start)."""
    env = installed_env(**{MARK_ENV: str(imported_file)})
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children")
    child_at = imported_at = None
    while process.poll() is None:
        now = time.perf_counter() - started
        if child_at is None:
            try:
                if children.read_text().strip():
                    child_at = now
            except OSError:
                pass
        if imported_at is None and _has_line(imported_file):
            imported_at = now
        if child_at is not None and imported_at is not None:
            break
        time.sleep(_POLL_S)
    if process.wait() != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return time.perf_counter() - started, child_at, imported_at


def _has_line(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.readline().endswith(b"\n")
    except OSError:
        return False


def alternate(
    bare: list[str], tool: Callable[[Path], list[str]], repeats: int
) -> tuple[float, float]:
    """Median wall times of ``bare`` and ``tool(out)``, run alternately."""
    bare_t, tool_t = alternate_timed(bare, tool, repeats)
    return statistics.median(bare_t.wall), statistics.median(tool_t.wall)


def alternate_timed(
    bare: list[str], tool: Callable[[Path], list[str]], repeats: int
) -> tuple[Timing, Timing]:
    """``bare`` and ``tool(out)`` run alternately, ``repeats`` pairs after one
    that warms the disk cache; their wall times and start-up marks."""
    bare_t, tool_t = Timing(), Timing()
    work = Path(tempfile.mkdtemp(prefix="xlacli-bench-"))
    try:
        for index in range(repeats + 1):
            mark = work / f"bare{index}.mark"
            bare_run = watched(bare, mark)
            out = work / f"run{index}"
            tool_run = watched(tool(out), out / "events.jsonl")
            if index:
                for timing, (wall, child, imported) in ((bare_t, bare_run), (tool_t, tool_run)):
                    timing.wall.append(wall)
                    if child is not None:
                        timing.child_started.append(child)
                    if imported is not None:
                        timing.imported.append(imported)
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return bare_t, tool_t


def bench(model: str, steps: int, repeats: int) -> tuple[Timing, Timing]:
    return alternate_timed(
        [sys.executable, "benchmarks/compile/bare_loop.py", model, str(steps)],
        lambda out: [
            sys.executable,
            "-m",
            "xlacli",
            "compile",
            model,
            "--steps",
            str(steps),
            "--out",
            str(out),
            "--format",
            "json",
        ],
        repeats,
    )


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="model files to run")
    args = parser.parse_args()
    print(
        "| model | steps | bare torch_xla loop (s) | xlacli compile (s) | ratio of medians "
        "| median of pair ratios (range) | xlacli child started (s) "
        "| torch_xla imported: bare (s) | torch_xla imported: xlacli's child (s) | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in args.models:
        load_before = os.getloadavg()[0]
        bare, tool = bench(model, args.steps, args.repeats)
        load_after = os.getloadavg()[0]
        ratios = [t / b for b, t in zip(bare.wall, tool.wall, strict=True)]
        print(
            f"| {model} | {args.steps} | {_median(bare.wall)} | {_median(tool.wall)} "
            f"| {statistics.median(tool.wall) / statistics.median(bare.wall):.3f} "
            f"| {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f}) "
            f"| {_median(tool.child_started)} | {_median(bare.imported)} "
            f"| {_median(tool.imported)} | {load_before:.1f}-{load_after:.1f} |",
            flush=True,
        )
        pairs = zip(bare.wall, tool.wall, strict=True)
        print(f"pairs (bare, xlacli) for {model}:", [(round(b, 2), round(t, 2)) for b, t in pairs])


if __name__ == "__main__":
    main()
