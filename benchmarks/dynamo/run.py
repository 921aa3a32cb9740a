"""The cost of watching Dynamo: three runs side by side, each a fresh process.

    python benchmarks/dynamo/run.py [--repeats 3] [--steps 3]

- bare: ``bare_dynamo_loop.py``, a plain torch.compile(backend="openxla") loop;
- observed: the same loop with xlacli's Dynamo observer (its hooks only);
- xlacli: ``xlacli compile MODEL --mode dynamo`` (every artifact, the report).

Alternating, a first round warming the disk cache, medians of ``--repeats``.
Goal: observed/bare and xlacli/bare at most 1.10 (the compile budget).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODELS = ("examples/transformer.py", "examples/dynamo/graph_break.py")
LOOP = "benchmarks/dynamo/bare_dynamo_loop.py"
sys.path.insert(0, str(REPO / "benchmarks"))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=installed_env())
    return time.perf_counter() - started


def bench(model: str, steps: int, repeats: int) -> tuple[float, float, float]:
    bare, observed, tool = [], [], []
    work = Path(tempfile.mkdtemp(prefix="xlacli-bench-"))
    xlacli = [sys.executable, "-m", "xlacli", "compile", model, "--mode", "dynamo"]
    try:
        for index in range(repeats + 1):  # the first round warms the disk cache
            times = (
                timed([sys.executable, LOOP, model, str(steps)]),
                timed([sys.executable, LOOP, model, str(steps), "--observe"]),
                timed(
                    [
                        *xlacli,
                        "--steps",
                        str(steps),
                        "--out",
                        str(work / f"r{index}"),
                        "--format",
                        "json",
                    ]
                ),
            )
            if index:
                for series, value in zip((bare, observed, tool), times, strict=True):
                    series.append(value)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return statistics.median(bare), statistics.median(observed), statistics.median(tool)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    print(
        "| model | steps | bare torch.compile (s) | + observer (s) | ratio | "
        "xlacli --mode dynamo (s) | ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for model in MODELS:
        bare, observed, tool = bench(model, args.steps, args.repeats)
        print(
            f"| {model} | {args.steps} | {bare:.2f} | {observed:.2f} | {observed / bare:.3f} "
            f"| {tool:.2f} | {tool / bare:.3f} |"
        )


if __name__ == "__main__":
    main()
