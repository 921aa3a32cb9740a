"""Steps kept as runs of equal steps: read back a step at a time, saved without
growing with a long loop, version-1 reports still loading."""

from __future__ import annotations

import dataclasses
import json

import pytest

from xlacli.analysis.memory.peaks import run_memory, step_memory
from xlacli.report.memory import GraphMemory, StepMemory
from xlacli.report.run_report import (
    GraphRecord,
    RunReport,
    dump_report,
    report_from_dict,
    report_to_dict,
)
from xlacli.report.steps import StepCycle, StepRecord, StepRecords
from xlacli.run_folder.step_events import step_event


def record(step: int, wall: float, *, compiles: int = 0, graphs: tuple[str, ...] = ("b",)):
    return StepRecord(step, wall, compiles, len(graphs), ("input 0 f32[8,64]",), graphs)


def loop(steps: int) -> list[StepRecord]:
    """Two compiling steps, then the same cached graph every step, every third step
    a little slower; a value read at step 7."""
    records = [record(0, 0.3, compiles=1, graphs=("a",)), record(1, 0.3, compiles=1)]
    for step in range(2, steps):
        wall = 0.003 if step % 3 else 0.004
        records.append(record(step, wall, graphs=("b", "r") if step == 7 else ("b",)))
    return records


def report(records, warmup: int = 2) -> RunReport:
    return RunReport(
        model="m.py", device="CPU", steps=len(records), steps_requested=len(records),
        train=True, run_dir="/r", compilations=2, executions=len(records),
        total_compile_time_s=0.6, total_execute_time_s=0.1, graphs=(),
        step_records=tuple(records), warmup=warmup,
    )  # fmt: skip


def test_equal_steps_fold_into_runs_and_read_back_a_step_at_a_time():
    records = loop(20)
    steps = StepRecords.fold(records, warmup=2)
    # 0, 1 compiled (each its own); 2-6 the cached graph; 7 read a value; 8-19 cached.
    assert [(run.first_step, run.steps) for run in steps.segments] == [
        (0, 1), (1, 1), (2, 5), (7, 1), (8, 12),
    ]  # fmt: skip
    assert len(steps) == 20 and bool(steps) and not StepRecords()
    assert [r.step for r in steps] == list(range(20))
    assert [r.step for r in reversed(steps)] == list(range(19, -1, -1))
    assert steps[7].graph_hashes == ("b", "r") and steps[-1].step == 19
    assert [r.step for r in steps[18:]] == [18, 19] and steps[5:8][0].step == 5
    with pytest.raises(IndexError):
        steps[20]
    # Everything but the clock is each step's own; a folded step has its run's median.
    for original, read in zip(records, steps, strict=True):
        assert dataclass_without_clock(original) == dataclass_without_clock(read)
    run = steps.segments[-1]
    assert run.median_wall_time_s == 0.003 and run.max_wall_time_s == 0.004
    assert run.wall_time_s == pytest.approx(sum(r.wall_time_s for r in records[8:]))
    assert steps[1].wall_time_s == 0.3  # a step alone keeps its own clock


def dataclass_without_clock(step: StepRecord) -> tuple:
    return (step.step, step.compilations, step.executions, step.graph_hashes, step.phase)


def test_a_run_never_crosses_the_end_of_the_warm_up():
    # Inference: step 0 compiles, step 1 (still warm-up) is cached like every later one.
    records = [record(0, 0.3, compiles=1)] + [
        record(s, 9.0 if s == 1 else 0.1) for s in range(1, 6)
    ]
    folded = report(records).step_records  # the report folds what it is given
    assert [(run.first_step, run.steps) for run in folded.segments] == [(0, 1), (1, 1), (2, 4)]
    assert [r.wall_time_s for r in folded[2:]] == [0.1] * 4


def test_report_json_does_not_grow_with_the_steps_and_loads_back_equal():
    short, long = report(loop(100)), report(loop(10_000))
    # A few digits more (the counts, the last run's length and its summed clock).
    assert len(dump_report(long)) - len(dump_report(short)) < 64
    data = json.loads(dump_report(long))
    assert "step_records" not in data and len(data["step_runs"]) == 5
    assert data["schema_version"] == 2
    loaded = report_from_dict(data)
    assert loaded == long and loaded.executions_per_step == long.executions_per_step
    assert len(loaded.step_records) == 10_000


def test_a_version_1_report_with_a_record_per_step_still_loads_folded():
    current = report(loop(30))
    data = report_to_dict(current)
    del data["step_runs"]
    data["schema_version"] = 1
    data["step_records"] = [
        {**record.__dict__, "input_signature": list(record.input_signature)} for record in loop(30)
    ]
    loaded = report_from_dict(data)
    assert [(run.first_step, run.steps) for run in loaded.step_runs] == [
        (0, 1), (1, 1), (2, 5), (7, 1), (8, 22),
    ]  # fmt: skip
    assert [r.graph_hashes for r in loaded.step_records] == [r.graph_hashes for r in loop(30)]


def test_memory_facts_fold_with_the_steps():
    graphs = (memory_graph_with("a", 100), memory_graph_with("b", 300))
    executions = [(0, "a")] + [(step, "b") for step in range(1, 1000)]
    steps = step_memory(graphs, executions)
    assert steps == (StepMemory(0, ("a",), 100), StepMemory(1, ("b",), 300, steps=999))
    events = [
        {"step": step, "autocast": [], "memory_info": {"bytes_used": 10 + (step == 500) * 99}}
        for step in range(1000)
    ]
    memory = run_memory(steps, [step_event(e) for e in events])
    # The first, the fullest and the last step's device memory; autocast where it changed.
    assert sorted(memory.device) == [0, 500, 999] and memory.device[500]["bytes_used"] == 109
    assert memory.autocast == {0: ""}
    assert memory.peak_step == StepMemory(1, ("b",), 300, steps=999)


def memory_graph_with(graph_hash: str, peak: int) -> GraphRecord:
    base = GraphRecord(
        hash=graph_hash, site=None, trigger="step_end", frames=(), ir_nodes=None,
        hlo_instructions=None, optimized_hlo_instructions=None, fusions=None,
        input_bytes=None, output_bytes=None, temp_bytes=None, compilations=1,
        compile_time_s=0.1, executions=1, execute_time_s=None, total_execute_time_s=0.0,
        first_step=0,
    )  # fmt: skip
    return dataclasses.replace(base, memory=GraphMemory(peak, 0, None, None, None))


def logging_loop(steps: int, every: int = 10) -> list[StepRecord]:
    """A loop that reads its loss every ``every`` steps (a second graph), as real
    training scripts log: runs alternate, a run-length fold alone grows with steps."""
    records = [record(0, 0.3, compiles=1, graphs=("a", "r")), record(1, 0.3, compiles=1)]
    for step in range(2, steps):
        logged = step % every == 0
        records.append(
            record(step, 0.004 if logged else 0.003, graphs=("b", "r") if logged else ("b",))
        )
    return records


def test_a_loop_that_logs_every_k_steps_is_one_cycle_read_back_step_by_step():
    records = logging_loop(10_000)
    steps = StepRecords.fold(records, warmup=2)
    assert len(steps.segments) <= 6, steps.segments  # not two runs every ten steps
    [cycle] = [s for s in steps.segments if isinstance(s, StepCycle)]
    assert cycle.period == 10 and cycle.repeats >= 990
    assert [r.step for r in steps] == list(range(10_000))
    assert [r.step for r in reversed(steps)][:3] == [9_999, 9_998, 9_997]
    for index in (0, 1, 2, 9, 10, 11, 4_321, 5_000, 9_990, 9_999):
        original, read = records[index], steps[index]
        assert dataclass_without_clock(original) == dataclass_without_clock(read), index
    logged = next(run for run in cycle.runs if run.graph_hashes == ("b", "r"))
    # One logged step a repeat: its clocks are over every repeat.
    assert logged.median_wall_time_s == 0.004
    assert logged.wall_time_s == pytest.approx(0.004 * cycle.repeats)
    short, long = report(logging_loop(100)), report(logging_loop(10_000))
    assert len(dump_report(long)) - len(dump_report(short)) < 64
    loaded = report_from_dict(json.loads(dump_report(long)))
    assert loaded == long and loaded.executions_per_step == long.executions_per_step
