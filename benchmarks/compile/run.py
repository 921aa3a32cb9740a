"""Wall time of ``xlacli compile`` against a bare torch_xla loop, side by side.

    python benchmarks/compile/run.py [--repeats 5] [--steps 2] [--models examples/transformer.py]

Both run the same model for the same steps on XLA:CPU, alternating, each in a
fresh process (torch and torch_xla imports included, as a user sees them).
Prints the medians and their ratio (goal: at most 1.10).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)

MODELS = ("examples/mlp.py", "examples/transformer.py")


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=installed_env())
    return time.perf_counter() - started


def alternate(
    bare: list[str], tool: Callable[[Path], list[str]], repeats: int
) -> tuple[float, float]:
    """Median wall times of ``bare`` and ``tool(out)``, run alternately."""
    bare_s, tool_s = [], []
    work = Path(tempfile.mkdtemp(prefix="xlacli-bench-"))
    try:
        for index in range(repeats + 1):  # the first pair warms the disk cache
            pair = (timed(bare), timed(tool(work / f"run{index}")))
            if index:
                bare_s.append(pair[0])
                tool_s.append(pair[1])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return statistics.median(bare_s), statistics.median(tool_s)


def bench(model: str, steps: int, repeats: int) -> tuple[float, float]:
    return alternate(
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="model files to run")
    args = parser.parse_args()
    print("| model | steps | bare torch_xla loop (s) | xlacli compile (s) | ratio |")
    print("|---|---|---|---|---|")
    for model in args.models:
        bare, tool = bench(model, args.steps, args.repeats)
        print(f"| {model} | {args.steps} | {bare:.2f} | {tool:.2f} | {tool / bare:.3f} |")


if __name__ == "__main__":
    main()
