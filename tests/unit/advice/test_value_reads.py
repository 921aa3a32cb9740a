"""The value-read cost model: the host's measured time inside each read, the
median over steps, reads that compiled left out by the child."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.advice.graphs import MODEL, ROOTS, graph
from xlacli.analysis.advice.inputs import AdviceInputs, GraphArtifacts
from xlacli.analysis.advice.value_reads import rank_value_reads, read_time, read_times_by_site
from xlacli.report.run_report import StepRecord
from xlacli.run_folder.step_events import step_event as parse_step

SITE = f"{MODEL}:3"
SOURCE = "import torch\n\nLOSSES.append(loss.item())\n"


def step_event(step: int, *reads: list) -> dict:
    return {"step": step, "read_times": [list(read) for read in reads]}


def test_each_steps_mean_read_per_user_line() -> None:
    events = [
        step_event(0, [SITE, None, 2, 8_000_000, 4_000_000, 2_000_000]),  # two reads
        step_event(1, [SITE, None, 1, 5e6, 2e6, 1e6], [SITE, "/lib/x.py:1", 1, 1e6, 1e6, 0]),
        {"step": 2},  # a step that read nothing, or whose reads all compiled
    ]
    times = read_times_by_site(parse_step(e) for e in events)
    assert times == {SITE: ((0.004, 0.002, 0.001), (0.003, 0.0015, 0.0005))}


def test_the_median_step_stands_for_the_read_less_the_callers_own_work() -> None:
    # wall, CPU, the calling thread's CPU (graph building, debug formatting)
    times = ((0.004, 0.002, 0.001), (0.090, 0.050, 0.001), (0.005, 0.003, 0.002))
    assert read_time(times) == pytest.approx((0.003, 0.001))  # one step under load ignored
    assert read_time(()) == (None, None)


def forced(executions: int, execute_time_s: float) -> GraphArtifacts:
    record = dataclasses.replace(
        graph("forced"), site=SITE, trigger="host_sync", executions=executions,
        execute_time_s=execute_time_s,
    )  # fmt: skip
    return GraphArtifacts(record)


def run(read_times: dict, steps: int = 4) -> AdviceInputs:
    records = tuple(StepRecord(i, 0.01, 0, 2, ()) for i in range(steps))
    return AdviceInputs(
        (forced(executions=8, execute_time_s=0.001),), ROOTS, step_records=records,
        read_source={MODEL: SOURCE}.get, read_times=read_times,
    )  # fmt: skip


def test_a_timed_read_costs_its_measured_time_per_read() -> None:
    timed = ((0.007, 0.004, 0.001), (0.006, 0.003, 0.001), (0.008, 0.005, 0.001))
    (cost,) = rank_value_reads(run({SITE: timed}))
    assert cost.reads_per_step == 2.0  # 8 forced executions over 4 steps
    assert cost.read_time_s == pytest.approx(0.006)
    assert cost.read_cpu_time_s == pytest.approx(0.003)
    # the time measured in the read, not the forced graph's 1 ms execution
    assert cost.extra_time_s == pytest.approx(2 * 0.006)
    assert cost.kind == "item"
    assert "add_step_closure" in cost.fix


def test_without_timings_the_forced_executions_are_the_cost() -> None:
    (cost,) = rank_value_reads(run({}))
    assert cost.read_time_s is cost.read_cpu_time_s is None
    assert cost.extra_time_s == pytest.approx(8 * 0.001 / 4)
