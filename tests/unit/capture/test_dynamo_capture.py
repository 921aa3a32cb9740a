"""The child-side Dynamo pieces that need no device: parsing Dynamo's graph-break
log, the backend and mode checks, and the comparison's figures and views."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest

from xlacli.analysis.mode_figures import figures
from xlacli.child.dynamo import _GraphBreakHandler, check_backend_listed, parse_graph_break
from xlacli.errors import EXIT_USAGE, UsageError
from xlacli.flows.modes import check_mode
from xlacli.parse.frames import CodeRoots
from xlacli.render.compare import comparison_json, comparison_text
from xlacli.report.run_report import GraphRecord, RunReport, StepRecord

BREAK = (
    "Graph break in user code at /u/model.py:21\n"
    "Graph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
    "  Explanation: Dynamo does not support tracing `Tensor.item()`\n"
    "User code traceback:\n"
    '  File "/u/model.py", line 21, in forward\n'
)


def test_parse_graph_break():
    assert parse_graph_break(BREAK) == {
        "file": "/u/model.py",
        "line": 21,
        "reason": "Unsupported Tensor.item() call with capture_scalar_outputs=False",
    }
    duplicate = BREAK.replace("Graph break in", "Graph break (user stack suppressed) in")
    assert parse_graph_break(duplicate)["line"] == 21
    assert parse_graph_break("something else") is None
    assert parse_graph_break("") is None


LIBRARY_BREAK = (
    "Graph break in user code at /env/site-packages/torchvision/utils.py:92\n"
    "Graph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
    "User code traceback:\n"
    '  File "/u/train.py", line 40, in main\n'
    "    loss = train_step(x)\n"
    '  File "/u/train.py", line 31, in train_step\n'
    "    grid = torchvision.utils.make_grid(features, normalize=True)\n"
    '  File "/env/site-packages/torch/utils/_contextlib.py", line 120, in decorate_context\n'
    "    return func(*args, **kwargs)\n"
    '  File "/env/site-packages/torchvision/utils.py", line 92, in norm_range\n'
    "    norm_ip(t, float(t.min()), float(t.max()))\n"
)
ROOTS = CodeRoots(("/env/lib/python3.11/",), "/env/site-packages/xlacli/")


def test_a_break_inside_a_library_names_the_users_call():
    parsed = parse_graph_break(LIBRARY_BREAK, ROOTS)
    assert parsed is not None
    assert (parsed["file"], parsed["line"]) == ("/env/site-packages/torchvision/utils.py", 92)
    assert (parsed["user_file"], parsed["user_line"]) == ("/u/train.py", 31)
    # in the user's own code: no second location
    assert "user_file" not in parse_graph_break(BREAK, ROOTS)


def test_a_suppressed_duplicate_keeps_the_users_call():
    handler = _GraphBreakHandler()
    duplicate = LIBRARY_BREAK.split("User code traceback:")[0].replace(
        "Graph break in", "Graph break (user stack suppressed due to duplicate graph break) in"
    )
    for message in (LIBRARY_BREAK, duplicate):
        handler.emit(logging.LogRecord("x", logging.DEBUG, "", 0, message, None, None))
    # Any interpreter's roots: /env/site-packages/ is a library, /u/ the user's.
    assert [(b["user_file"], b["user_line"]) for b in handler.breaks] == [("/u/train.py", 31)] * 2


def test_no_openxla_backend_is_a_usage_error():
    check_backend_listed(["aot_eager", "openxla"])
    with pytest.raises(UsageError) as raised:
        check_backend_listed(["aot_eager", "inductor"])
    assert raised.value.exit_code == EXIT_USAGE
    assert "'openxla' backend" in raised.value.message and "\n" not in raised.value.message


def test_mode_dynamo_on_a_script_is_a_usage_error():
    model_file = SimpleNamespace(path="m.py", is_script=False)
    script = SimpleNamespace(path="train.py", is_script=True)
    check_mode(model_file, "dynamo")
    check_mode(script, "lazy")
    with pytest.raises(UsageError) as raised:
        check_mode(script, "dynamo")
    assert raised.value.exit_code == EXIT_USAGE and "as a script" in raised.value.message
    with pytest.raises(UsageError):
        check_mode(model_file, "eager")


def report(mode: str, wall_times: tuple[float, ...]) -> RunReport:
    graph = GraphRecord(
        hash="h",
        site=None,
        trigger="step_end",
        frames=(),
        ir_nodes=3,
        hlo_instructions=9,
        optimized_hlo_instructions=7,
        fusions=1,
        input_bytes=100,
        output_bytes=20,
        temp_bytes=None,
        compilations=1,
        compile_time_s=0.5,
        executions=3,
        execute_time_s=0.01,
        total_execute_time_s=0.03,
        first_step=0,
    )
    return RunReport(
        model="m.py",
        device="CPU",
        steps=3,
        steps_requested=3,
        train=False,
        run_dir=f"/r/{mode}",
        compilations=1,
        executions=3,
        total_compile_time_s=0.5,
        total_execute_time_s=0.03,
        graphs=(graph,),
        step_records=tuple(StepRecord(i, t, 0, 1, ()) for i, t in enumerate(wall_times)),
        mode=mode,
    )


def test_comparison_figures_and_views():
    reports = {
        "lazy": report("lazy", (9.0, 0.4, 0.2, 0.3)),
        "dynamo": report("dynamo", (9.0, 0.1, 0.1, 0.1)),
    }
    compared = {mode: figures(r) for mode, r in reports.items()}
    lazy = compared["lazy"]
    assert lazy.median_step_s == pytest.approx(0.25)  # the steps after the 2 warm-up steps
    assert lazy.optimized_hlo_instructions == 7 and lazy.peak_device_bytes == 120
    assert lazy.graph_breaks == 0 and lazy.ops_traced_per_step is None
    data = json.loads(comparison_json(reports, compared))
    assert set(data["modes"]) == {"lazy", "dynamo"} and data["modes"]["dynamo"]["mode"] == "dynamo"
    assert data["comparison"]["lazy"]["compiles"] == 1
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(comparison_text("title", compared))
    text = console.export_text()
    assert "median step time" in text and "250 ms" in text and "torch ops traced" not in text
