"""Execution times that are the device's (issue 38): torch_xla's ``ExecuteTime``
runs from a graph's dispatch to its end, so a step that does not wait for its
device gives the next graph the wait behind it too. The report's times, per
graph and in total, are checked against the samples torch_xla itself kept,
read by the script at its end."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

# Heavy graphs dispatched without waiting, then small graphs queued behind them;
# at its end the script writes torch_xla's own ExecuteTime samples.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch, torch_xla
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    wait = sys.argv[2] == "wait"
    device = torch_xla.device()
    w = torch.randn(384, 384).to(device)
    x = torch.randn(384, 384).to(device)
    for _ in range(12):
        for _ in range(6):
            x = torch.tanh(x @ w)
        torch_xla.sync()
        if wait:
            xm.wait_device_ops()
    small = torch.ones(4).to(device)
    for _ in range(6):
        small = small * 0.5 + 1
        torch_xla.sync()
        if wait:
            xm.wait_device_ops()
    xm.wait_device_ops()
    total, accumulated, samples = met.metric_data("ExecuteTime")
    with open(sys.argv[1], "w") as out:
        json.dump({"total": total, "sum_ns": accumulated, "samples": samples}, out)
    """
)


def _union_s(samples: list[list[float]]) -> float:
    """How long at least one execution ran (an interval merge over [end - time, end])."""
    intervals = sorted((end - ns / 1e9, end) for end, ns in samples)
    busy, start, stop = 0.0, *intervals[0]
    for begin, end in intervals[1:]:
        if begin > stop:
            busy, start, stop = busy + stop - start, begin, end
        else:
            stop = max(stop, end)
    return busy + stop - start


def _run(tmp_path: Path, mode: str) -> tuple[dict, dict]:
    (tmp_path / "train.py").write_text(SCRIPT)
    metric = tmp_path / f"execute-{mode}.json"
    result = run_cli(
        "compile", "train.py", "--out", f"run-{mode}", "--", str(metric), mode, cwd=tmp_path
    )
    assert result.code == 0, result.stderr
    report = json.loads((tmp_path / f"run-{mode}" / "report.json").read_text())
    return report, json.loads(metric.read_text())


@pytest.fixture(scope="module")
def queued(tmp_path_factory) -> tuple[dict, dict]:
    return _run(tmp_path_factory.mktemp("queued"), "queue")


def test_queued_executions_count_the_device_once(queued):
    report, metric = queued
    assert report["executions"] == metric["total"] == 18
    # torch_xla's samples overlap: summed, they count the same device time again and again.
    assert metric["sum_ns"] / 1e9 > 2 * _union_s(metric["samples"])
    # The report's total is the time the device was busy: the samples' union.
    assert report["total_execute_time_s"] == pytest.approx(_union_s(metric["samples"]), rel=1e-3)
    by_graph = sum(graph["total_execute_time_s"] for graph in report["graphs"])
    assert by_graph == pytest.approx(report["total_execute_time_s"], rel=1e-6)


def test_a_small_graph_queued_behind_heavy_ones_keeps_its_own_time(queued):
    report, _ = queued
    heavy, small = sorted(report["graphs"], key=lambda graph: -graph["executions"])
    assert (heavy["executions"], small["executions"]) == (12, 6)
    assert small["execute_time_s"] < heavy["execute_time_s"] / 10, (small, heavy)


def test_executions_that_wait_keep_torch_xlas_times(tmp_path):
    report, metric = _run(tmp_path, "wait")
    assert report["executions"] == metric["total"]
    # Nothing queued: each sample is the device's time, and the report sums them.
    assert report["total_execute_time_s"] == pytest.approx(metric["sum_ns"] / 1e9, rel=1e-3)
