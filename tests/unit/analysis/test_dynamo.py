"""Dynamo's events -> the report's record and compile causes, on hand-built logs."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.analysis.test_check import baseline as check_baseline
from xlacli.analysis.check.checks import OK, REGRESSION, compare
from xlacli.analysis.dynamo.record import XlaEvents, dynamo_window_note, explain_dynamo
from xlacli.analysis.profile.host_split import host_split, tracing_note
from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.report.run_report import (
    CompileCause,
    CompileEvent,
    RunReport,
    report_from_dict,
    report_to_dict,
)
from xlacli.run_folder.events import ChildLog
from xlacli.run_folder.step_events import step_event

ROOTS = CodeRoots(library=("/lib/",), xlacli="/xlacli/")
MODEL = "/u/model.py"
STEP = Frame("run", "/xlacli/steps.py", 9)
FORWARD = Frame("forward", MODEL, 12)
RESUME = Frame("torch_dynamo_resume_in_forward_at_14", MODEL, 14)
GUARD = "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"


def tiny_report() -> RunReport:
    return RunReport(
        model="m.py",
        device="CPU",
        steps=1,
        steps_requested=1,
        train=False,
        run_dir="/r",
        compilations=0,
        executions=0,
        total_compile_time_s=0.0,
        total_execute_time_s=0.0,
        graphs=(),
    )


def frame_event(compile_id, function, line, guard=None):
    return {
        "compile_id": compile_id,
        "function": function,
        "file": MODEL,
        "line": line,
        "fx_ops": 2,
        "guard_failure": guard,
        "compile_time_s": 0.05,
        "graph_breaks": 0,
    }


def xla_event(kind, graph_hash, frame):
    return AnalysisEvent(kind, "dynamo", graph_hash, 1, 1, (frame, STEP))


def lazy_cause(category="first_compile"):
    return CompileCause(category, f"{MODEL}:3", None, "input 0 shape f32[4] -> f32[6]")


@pytest.fixture
def run():
    """Step 0: forward breaks at line 14 and resumes; step 2: forward's guard fails."""
    log = ChildLog(
        steps=[
            {
                "step": 0,
                "dynamo": {
                    "frames": [
                        frame_event("0/0", "forward", 12),
                        frame_event("1/0", RESUME.function, 14),
                    ],
                    "graph_breaks": [
                        {"file": MODEL, "line": 14, "reason": "Unsupported Tensor.item() call\nx"}
                    ],
                },
            },
            {"step": 1},
            {"step": 2, "dynamo": {"frames": [frame_event("0/1", "forward", 12, GUARD)]}},
        ],
        dynamo_counters={"frames": {"total": 3}},
    )
    compiles = [
        xla_event("compile", "a", FORWARD),
        xla_event("compile", "b", RESUME),
        xla_event("compile", "c", FORWARD),
    ]
    executions = [xla_event("execute", h, f) for h, f in (("a", FORWARD), ("b", RESUME))] * 2
    xla = XlaEvents(compiles, [0, 0, 2], executions, [0, 0, 1, 1])
    events = [
        CompileEvent(
            step, h, 0.1, step >= 2, lazy_cause("input_shape" if h == "c" else "first_compile")
        )
        for step, h in ((0, "a"), (0, "b"), (2, "c"))
    ]
    return explain_dynamo(log, xla, events, ROOTS, mode="dynamo", extractions=3)


def test_record_counts_frames_breaks_and_recompiles(run):
    record, _ = run
    assert record.source == "xlacli" and record.fx_graphs == 3 and record.recompiles == 1
    assert [f.graph_hashes for f in record.frames] == [("a",), ("b",), ("c",)]
    (brk,) = record.graph_breaks
    assert (brk.location, brk.reason, brk.count) == (
        f"{MODEL}:14",
        "Unsupported Tensor.item() call",
        1,
    )
    assert (
        record.frames[2].guard_failure
        == "tensor 'x' size mismatch at index 0. expected 4, actual 6"
    )
    assert record.counters == {"frames": {"total": 3}}


def test_causes_graph_break_and_dynamo_guard(run):
    _, events = run
    assert [e.cause.category for e in events] == ["first_compile", "graph_break", "dynamo_guard"]
    assert events[1].cause.location == f"{MODEL}:14"
    assert "Unsupported Tensor.item() call" in events[1].cause.detail
    guard = events[2].cause
    assert guard.location == f"{MODEL}:12"  # the frame, in the user's code
    assert "expected 4, actual 6" in guard.detail and "f32[4] -> f32[6]" in guard.detail
    assert guard.hint and "mark_dynamic" in guard.hint


def test_a_guard_in_library_code_keeps_the_user_line():
    library = Frame("inner", "/lib/torch/_dynamo/external_utils.py", 66)
    log = ChildLog(
        steps=[
            {
                "step": 0,
                "dynamo": {"frames": [dict(frame_event("0/0", "inner", 66), file=library.file)]},
            },
            {
                "step": 1,
                "dynamo": {
                    "frames": [dict(frame_event("0/1", "inner", 66, GUARD), file=library.file)]
                },
            },
        ]
    )
    compiles = [xla_event("compile", "a", library), xla_event("compile", "b", library)]
    events = [
        CompileEvent(0, "a", 0.1, False, lazy_cause()),
        CompileEvent(1, "b", 0.1, False, lazy_cause("input_shape")),
    ]
    _, explained = explain_dynamo(
        log, XlaEvents(compiles, [0, 1]), events, ROOTS, mode="lazy", extractions=2
    )
    assert explained[1].cause.category == "dynamo_guard"
    assert explained[1].cause.location == f"{MODEL}:3"
    assert explained[1].cause.library_location == f"{library.file}:66"


def test_no_dynamo_keeps_the_events():
    events = [CompileEvent(0, "a", 0.1, False, lazy_cause())]
    record, explained = explain_dynamo(
        ChildLog(steps=[{"step": 0}]), XlaEvents([], []), events, ROOTS, mode="lazy", extractions=0
    )
    assert record is None and explained == events


def test_window_note_counts_retraced_frames(run):
    record, _ = run
    assert dynamo_window_note(record, {1}) is None
    note = dynamo_window_note(record, {2})
    assert note and "1 frame again" in note and "size mismatch" in note


def test_report_round_trip_keeps_dynamo(run):
    record, _ = run
    report = dataclasses.replace(tiny_report(), mode="dynamo", dynamo=record)
    assert report_from_dict(report_to_dict(report)) == report


def test_host_split_and_tracing_note():
    steps = [
        {"op_tracing": {"ops": 180, "time_ns": 6e6}},
        {"op_tracing": {"ops": 182, "time_ns": 4e6}},
    ]
    timeline = {"window_s": 0.024, "python_s": 0.01, "op_tracing_s": 0.01, "graph_s": 0.004}
    split = host_split([step_event(s) for s in steps], timeline)
    assert split["ops_per_step"] == 181
    assert split["op_tracing_s"] == pytest.approx(0.01)
    assert split["user_python_s"] == pytest.approx(0.01)
    assert split["tracing_share"] == pytest.approx(0.014 / 0.024)
    command = "xlacli profile m.py --train --mode both"
    note = tracing_note(split, "lazy", command)
    assert note and "181 torch ops" in note and note.endswith("\n" + command)
    script_note = tracing_note(split, "lazy", None)  # a script: no command that cannot run
    assert script_note and "xlacli" not in script_note
    assert tracing_note(split, "dynamo", command) is None
    assert tracing_note({**split, "tracing_share": 0.2}, "lazy", command) is None
    assert host_split([], timeline) == {}


def test_check_counts_graph_breaks_and_dynamo_recompiles():
    base = check_baseline(
        executions_per_step=(2, 2, 2), mode="dynamo", graph_breaks=1, dynamo_recompiles=0
    )
    same = compare(base, base)
    assert {r.name: r.status for r in same.results}["graph breaks"] == OK
    worse = compare(base, dataclasses.replace(base, graph_breaks=2, dynamo_recompiles=1))
    assert {r.name for r in worse.regressions} == {"graph breaks", "Dynamo recompiles"}
    lazy = dataclasses.replace(base, mode="lazy", graph_breaks=0)
    assert not any(r.name == "graph breaks" for r in compare(lazy, lazy).results)
    assert any(
        r.status == REGRESSION
        for r in compare(lazy, dataclasses.replace(lazy, graph_breaks=1)).results
    )


def test_dynamo_view_lists_frames_breaks_and_guards(run):
    from rich.console import Console

    from xlacli.render.dynamo import dynamo_view
    from xlacli.report.run_report import StepRecord

    record, _ = run
    report = dataclasses.replace(
        tiny_report(),
        steps=3,
        step_records=tuple(StepRecord(i, 0.1, 0, 1, ()) for i in range(3)),
        dynamo=record,
    )
    console = Console(width=200, record=True)
    console.print(dynamo_view(report))
    text = console.export_text()
    assert "3 frame compiles, 3 FX graphs, 1 graph break, 1 guard recompile" in text
    assert "Dynamo frame compiles per step: 2 0 1" in text
    assert "Graph breaks (1):" in text and "model.py:14" in text
    assert "Dynamo recompiles (1, 1 after the warm-up):" in text
    assert "expected 4, actual 6" in text
    assert dynamo_view(tiny_report()) is None
