"""Rendering slips a newcomer met (issue 38), on reports built by hand: a
cause's changes each split at its own arrow, a trace path printed whole, a
warning shared by graphs said once."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

from rich.console import Console

from tests.unit.render.test_html_page import _graph
from tests.unit.render.test_html_report_sections import _page, _report, _section
from xlacli.render.html.run_sections import before_after
from xlacli.render.memory import memory_view
from xlacli.report.memory import GraphPrecision, PrecisionMix
from xlacli.report.profile import ProfileSummary
from xlacli.report.run_report import CompileCause, CompileEvent

TWO_CHANGES = (
    "input train.py:53 shape f32[64,32] -> f32[40,32]; input train.py:53 shape s64[64] -> s64[40]"
)


def test_each_change_of_a_cause_is_split_at_its_own_arrow():
    assert before_after(TWO_CHANGES) == [
        {"before": "input train.py:53 shape f32[64,32]", "after": "f32[40,32]"},
        {"before": "input train.py:53 shape s64[64]", "after": "s64[40]"},
    ]
    assert before_after("input 0 shape s64[4,16] -> s64[4,24]") == [
        {"before": "input 0 shape s64[4,16]", "after": "s64[4,24]"}
    ]
    # A part that is no change: the detail is shown as it is.
    assert before_after("3 ops added; input 0 shape f32[2] -> f32[3]") is None


def test_the_html_page_pairs_each_before_with_its_after(tmp_path: Path):
    cause = CompileCause("input_shape", str(tmp_path / "train.py:53"), None, TWO_CHANGES)
    event = CompileEvent(3, "abc", 0.1, True, cause, compared_with="abd")
    page = _page(_report(tmp_path, _graph("abc", {}), events=(event,)))
    section = _section(page, "recompiles")
    pairs = section.split('<dl class="before-after">')[1].split("</dl>")[0]
    shown = [part.split("</code>")[0] for part in pairs.split("<code>")[1:]]
    assert shown == [
        "input train.py:53 shape f32[64,32]",
        "f32[40,32]",
        "input train.py:53 shape s64[64]",
        "s64[40]",
    ]


def _summary(run_dir: str, trace: str) -> ProfileSummary:
    return ProfileSummary(
        model="train.py",
        device="CPU",
        steps=2,
        warmup=1,
        step_times_s=(0.01, 0.01),
        step_time_s=None,
        batch_size=None,
        samples_per_s=None,
        breakdown={},
        top_ops=(),
        graphs=(),
        window_compiles=0,
        trace_files=(trace,),
        logdir=run_dir,
        session="s",
        run_dir=run_dir,
        source_of_op_times="trace events",
    )


def test_the_trace_path_is_printed_whole_however_narrow_the_terminal(tmp_path, monkeypatch, capsys):
    from xlacli.render.profile import ProfileView
    from xlacli.render.view import show

    run_dir = str(tmp_path / ("a-long-run-folder-name-" * 4))
    trace = f"{run_dir}/tensorboard/plugins/profile/session/host.xplane.pb"
    monkeypatch.setenv("COLUMNS", "60")
    show(ProfileView(_summary(run_dir, trace)), "text")
    lines = capsys.readouterr().out.splitlines()
    assert f"Trace: {trace}" in lines, lines
    assert f"Run folder: {run_dir}" in lines, lines


def _f64_graph(graph_hash: str):
    precision = GraphPrecision(
        requested=PrecisionMix({"f32": 40, "f64": 2}, {}, {}),
        optimized=None,
        f64_sources=("/site/torch/optim/adam.py:466",),
    )
    return dataclasses.replace(_graph(graph_hash, {}), precision=precision)


def test_a_warning_four_graphs_share_is_one_line(tmp_path: Path):
    hashes = ("aaaaaaaa11", "bbbbbbbb22", "cccccccc33", "dddddddd44")
    report = _report(tmp_path, *(_f64_graph(h) for h in hashes))
    out = io.StringIO()
    console = Console(file=out, width=200)
    for line in memory_view(report):
        console.print(line)
    warned = [line for line in out.getvalue().splitlines() if "f64 instructions" in line]
    assert len(warned) == 1, warned
    assert warned[0].startswith("4 graphs (aaaaaaaa, bbbbbbbb, cccccccc, ...): 2 f64 instructions")
    assert warned[0].endswith("expected, nothing to fix")
