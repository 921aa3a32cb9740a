"""The pytest plugin's cost per test: tiny torch_xla tests with and without a budget.

    python benchmarks/pytest_plugin/run.py [--repeats 3] [--tests 10]

Writes one test module of ``--tests`` tiny tests (a Linear layer, three steps, a
batch size of its own so each test compiles once) in three variants, and runs
each in a fresh ``pytest`` process, alternating: ``plain`` (no marker: the plugin
is loaded and does nothing), ``budget`` (``@pytest.mark.xla_compiles(max=1)``,
within budget) and ``over`` (``max=0``: every test fails with its explanation,
which builds the test's report). Reports the median session wall time, the
session's CPU time (user + sys of the pytest process and its children: steadier
than wall time on a loaded machine), the median per-test time (set-up, call and
teardown, from pytest's JUnit XML), and the CPU time a variant adds per test
(its session CPU time minus the plain one's, over the tests).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKERS = {
    "plain": "",
    "budget": "@pytest.mark.xla_compiles(max=1)\n",
    "over": ("@pytest.mark.xla_compiles(max=0)\n"),
}
HEADER = """
import pytest
import torch
import torch_xla


@pytest.fixture(scope="module")
def layer():
    return torch.nn.Linear(16, 16).to(torch_xla.device())
"""
TEST = """

{marker}def test_step_{index}(layer):
    for _ in range(3):
        out = layer(torch.randn({batch}, 16).to(torch_xla.device()))
        torch_xla.sync()
"""


def write_module(folder: Path, variant: str, tests: int) -> Path:
    body = "".join(TEST.format(marker=MARKERS[variant], index=i, batch=i + 2) for i in range(tests))
    path = folder / variant / f"test_{variant}.py"
    path.parent.mkdir(parents=True)
    path.write_text(HEADER + body)
    return path


def run_session(module: Path) -> tuple[float, float, list[float]]:
    """Wall seconds, CPU seconds (user + sys) and each test's seconds of one session."""
    junit = module.parent / "junit.xml"
    env = {**os.environ, "PJRT_DEVICE": "CPU", "PYTHONPATH": str(REPO)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "xlacli.pytest_plugin",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            str(module),
        ],
        cwd=module.parent,
        env=env,
        capture_output=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    cases = ElementTree.parse(junit).getroot().iter("testcase")
    return wall, cpu, [float(case.get("time", 0)) for case in cases]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tests", type=int, default=10)
    args = parser.parse_args()
    walls: dict[str, list[float]] = {variant: [] for variant in MARKERS}
    cpus: dict[str, list[float]] = {variant: [] for variant in MARKERS}
    per_test: dict[str, list[float]] = {variant: [] for variant in MARKERS}
    with tempfile.TemporaryDirectory() as tmp:
        modules = {variant: write_module(Path(tmp), variant, args.tests) for variant in MARKERS}
        for _ in range(args.repeats):
            for variant, module in modules.items():
                wall, cpu, times = run_session(module)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
                # The first test pays the torch_xla client's start; the rest are the cost.
                per_test[variant].extend(times[1:])
    base = statistics.median(per_test["plain"])
    base_cpu = statistics.median(cpus["plain"])
    load = os.getloadavg()[0]
    print(f"{args.tests} tests x {args.repeats} sessions per variant; load average {load:.1f}")
    print(
        f"{'variant':8} {'session s':>10} {'CPU s':>7} {'per test ms':>12} {'added ms':>9} "
        f"{'added CPU ms':>13}"
    )
    for variant in MARKERS:
        test_ms = statistics.median(per_test[variant]) * 1e3
        cpu = statistics.median(cpus[variant])
        print(
            f"{variant:8} {statistics.median(walls[variant]):10.2f} {cpu:7.2f} {test_ms:12.1f} "
            f"{test_ms - base * 1e3:9.1f} {(cpu - base_cpu) / args.tests * 1e3:13.1f}"
        )


if __name__ == "__main__":
    main()
