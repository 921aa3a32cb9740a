"""Wall time of ``xlacli compile --devices 4`` against a bare SPMD loop, side by side.

    python benchmarks/spmd/run.py [--repeats 3] [--steps 3] [--devices 4]

Both run the same SPMD example for the same steps on XLA:CPU with the same number
of virtual devices, alternating, each in a fresh process (imports included).
Prints the medians of wall time and of CPU time (user + system, the process and
its children: what the machine's load does not inflate) and their ratios (goal: at
most 1.10).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODELS = ("examples/spmd/data_parallel_mlp.py", "examples/spmd/transformer_block.py")


def timed(command: list[str], devices: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run."""
    env = {**os.environ, "PJRT_DEVICE": "CPU", "CPU_NUM_DEVICES": str(devices)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, check=True, capture_output=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def bench(
    model: str, steps: int, repeats: int, devices: int
) -> tuple[tuple[float, float], tuple[float, float]]:
    """((bare wall, bare CPU), (xlacli wall, xlacli CPU)), medians."""
    bare: list[tuple[float, float]] = []
    tool: list[tuple[float, float]] = []
    work = Path(tempfile.mkdtemp(prefix="xlacli-bench-spmd-"))
    bare_command = [sys.executable, "benchmarks/spmd/bare_spmd.py", model, str(steps)]
    try:
        for index in range(repeats + 1):  # the first pair warms the disk cache
            tool_command = [sys.executable, "-m", "xlacli", "compile", model, "--steps"]
            tool_command += [str(steps), "--devices", str(devices), "--out", str(work / str(index))]
            bare_s = timed(bare_command, devices)
            tool_s = timed([*tool_command, "--format", "json"], devices)
            if index:
                bare.append(bare_s)
                tool.append(tool_s)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _medians(bare), _medians(tool)


def _medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--devices", type=int, default=4)
    args = parser.parse_args()
    print(
        "| model | devices | steps | bare wall (s) | xlacli wall (s) | wall ratio "
        "| bare CPU (s) | xlacli CPU (s) | CPU ratio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for model in MODELS:
        (bare_wall, bare_cpu), (wall, cpu) = bench(model, args.steps, args.repeats, args.devices)
        print(
            f"| {model} | {args.devices} | {args.steps} | {bare_wall:.2f} | {wall:.2f} "
            f"| {wall / bare_wall:.3f} | {bare_cpu:.2f} | {cpu:.2f} | {cpu / bare_cpu:.3f} |"
        )


if __name__ == "__main__":
    main()
