"""The step events' metric deltas, in this process on XLA:CPU: execution times
held in torch_xla's buffer and read with a later step's come back whole and in
order, and each step still counts its own executions."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
torch_xla = pytest.importorskip("torch_xla")

from xlacli.child import metric_deltas  # noqa: E402
from xlacli.child.metric_deltas import HELD_KEY, MetricTracker  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def run_steps(
    tracker: MetricTracker,
    steps: int,
    clock: Clock,
    seconds: float = 0.0,
    waits: list[bool] | None = None,
    size: int = 3,
) -> list:
    import torch_xla.core.xla_model as xm

    device = torch_xla.device()
    x = torch.ones(size, size, device=device)
    deltas = []
    for step in range(steps):
        x = (x @ x) * 0.001 - 0.25 if size > 3 else x * 1.5 - 0.25
        torch_xla.sync()
        waited = True if waits is None else waits[step]
        if waited:
            xm.wait_device_ops()
        clock.now += seconds
        deltas.append(tracker.delta(waited=waited))
    xm.wait_device_ops()
    deltas.append(tracker.delta(final=True))
    return deltas


def all_times(deltas: list) -> list[float]:
    return [t for d in deltas for t in (*d.get(HELD_KEY, ()), *d["execute_time_ns"])]


def test_held_times_come_back_whole_in_order_and_steps_keep_their_counts(monkeypatch):
    import torch_xla.debug.metrics as met

    monkeypatch.setattr(metric_deltas, "HOLD_EXECUTIONS", 4)
    clock = Clock()
    tracker = MetricTracker(clock)
    tracker.delta(final=True)  # this process's earlier work
    deltas = run_steps(tracker, 10, clock)
    _, _, samples = met.metric_data("ExecuteTime")
    new = [value for _, value in samples[-10:]]
    assert all_times(deltas) == new  # each execution's own time, in order
    assert [d["counters"].get("ExecuteComputation", 0) for d in deltas[:10]] == [1] * 10
    held = [len(d.get(HELD_KEY, ())) for d in deltas]
    # Read at every fourth execution (three held and the step's own), the
    # last two at the end.
    assert held == [0, 0, 0, 3, 0, 0, 0, 3, 0, 0, 2]
    assert [len(d["execute_time_ns"]) for d in deltas] == [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]


def test_a_slow_run_reads_its_times_every_step():
    clock = Clock()
    tracker = MetricTracker(clock)
    tracker.delta(final=True)
    deltas = run_steps(tracker, 3, clock, seconds=2.0)
    assert [len(d["execute_time_ns"]) for d in deltas[:3]] == [1, 1, 1]
    assert not any(d.get(HELD_KEY) for d in deltas)


def test_steps_that_do_not_wait_count_their_lookups_and_a_waiting_step_only_its_own(monkeypatch):
    """Executions still running when their step ends are counted in it (by
    the graph's cache lookup), never again in the step whose counters show
    them; every time comes back, in order."""
    import torch_xla.debug.metrics as met

    monkeypatch.setattr(metric_deltas, "HOLD_EXECUTIONS", 4)
    clock = Clock()
    tracker = MetricTracker(clock)
    tracker.delta(final=True)
    waits = [False] * 7 + [True] + [False] * 2
    deltas = run_steps(tracker, 10, clock, waits=waits, size=256)
    assert metric_deltas.lookups_count_executions()
    assert [d["executions"] for d in deltas] == [1] * 10 + [0]
    _, _, samples = met.metric_data("ExecuteTime")
    assert all_times(deltas) == [value for _, value in samples[-10:]]
    # Times read while steps still run are all held (earlier steps' and this one's).
    unwaited = [d for d, waited in zip(deltas, waits, strict=False) if not waited]
    assert not any(d["execute_time_ns"] for d in unwaited)
    # When an execution finished is not the step's: its counters come with the
    # next read of the times, so equal steps have equal events; none is lost.
    moved = [d["counters"].get("ExecuteComputation", 0) for d in deltas]
    assert sum(moved) == 10
    assert moved[:3] == [0, 0, 0]  # steps that held their times (the fourth reads them)


def test_each_time_comes_with_when_it_ended(monkeypatch):
    """Issue 38: a sample's end comes beside it, in the same order, held or not,
    so the parser can take each execution's own time on the device."""
    import torch_xla.debug.metrics as met

    monkeypatch.setattr(metric_deltas, "HOLD_EXECUTIONS", 4)
    clock = Clock()
    tracker = MetricTracker(clock)
    tracker.delta(final=True)
    deltas = run_steps(tracker, 6, clock)
    ends = [
        end
        for d in deltas
        for end in (*d.get(metric_deltas.ENDS_HELD_KEY, ()), *d.get(metric_deltas.ENDS_KEY, ()))
    ]
    _, _, samples = met.metric_data("ExecuteTime")
    assert ends == [end for end, _ in samples[-6:]]
    assert len(ends) == len(all_times(deltas))
