"""torch.compile(backend="openxla") on the examples in examples/dynamo/, on
XLA:CPU: Dynamo's frames, graph breaks and guard failures, checked against
torch_xla's counters and against Dynamo's own counters in a bare run of the
same model. One capture per example, shared by many assertions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, MODELS, REPO, assert_clean_error, run_cli
from tests.report_json import executions_per_step
from xlacli.parse.metrics_report import parse_metrics_report
from xlacli.run_folder.events import read_events

pytestmark = pytest.mark.e2e

DYNAMO = EXAMPLES / "dynamo"

# Runs an example's model as a user would, without xlacli: torch.compile on the
# model, the same inputs and steps, then Dynamo's and torch_xla's own counts.
BARE_RUN = """
import importlib.util, json, sys
import torch, torch_xla
import torch_xla.debug.metrics as met
from torch._dynamo.utils import counters
spec = importlib.util.spec_from_file_location("example", sys.argv[1])
example = importlib.util.module_from_spec(spec)
spec.loader.exec_module(example)
device = torch_xla.device()
model = torch.compile(example.get_model().to(device), backend="openxla")
for step in range(int(sys.argv[2])):
    with torch.no_grad():
        model(example.get_inputs(step).to(device))
    torch_xla.sync()
print(json.dumps({
    "counters": {k: dict(v) for k, v in counters.items()},
    "UncachedCompile": met.counter_value("UncachedCompile"),
}))
"""


def _line_of(path: Path, fragment: str) -> int:
    lines = path.read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if fragment in line)


def _compile(tmp_path_factory, name: str, *args: str) -> tuple[str, dict]:
    """Run ``xlacli compile`` (text on stdout) and load the run's report.json."""
    run = tmp_path_factory.mktemp(name) / "run"
    result = run_cli("compile", *args, "--out", run, cwd=REPO)
    assert result.code == 0, result.stderr
    return result.stdout, json.loads((run / "report.json").read_text())


def _documented(capture_once, example: str, *args: str) -> tuple[str, dict]:
    """The example's documented ``compile`` run (text on stdout) and its report.json,
    shared with the golden reports, which run the same command."""
    captured = capture_once("compile", f"examples/dynamo/{example}", *args)
    assert captured.result.code == 0, captured.result.stderr
    return captured.result.stdout, captured.report


def _profile(run: Path, model: str, *args: str) -> dict:
    """Run ``xlacli profile`` with JSON on stdout; returns the summary."""
    result = run_cli("profile", model, *args, "--out", run, "--format", "json", cwd=REPO)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _metrics(report: dict):
    return parse_metrics_report((Path(report["run_dir"]) / "metrics.txt").read_text())


@pytest.fixture(scope="module")
def graph_break(capture_once):
    return _documented(capture_once, "graph_break.py", "--mode", "dynamo", "--steps", "3")


@pytest.fixture(scope="module")
def bare_graph_break():
    completed = subprocess.run(
        [sys.executable, "-c", BARE_RUN, str(DYNAMO / "graph_break.py"), "3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(completed.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def guard(tmp_path_factory):
    return _compile(
        tmp_path_factory,
        "guard",
        str(DYNAMO / "guard_recompile.py"),
        "--mode",
        "dynamo",
        "--steps",
        "3",
    )


@pytest.fixture(scope="module")
def user_compiled(capture_once):
    return _documented(capture_once, "clean.py", "--steps", "3")


def test_graph_break_reason_and_exact_line(graph_break):
    text, report = graph_break
    path = DYNAMO / "graph_break.py"
    line = _line_of(path, "if h.sum().item() > 0:  # graph break")
    (brk,) = report["dynamo"]["graph_breaks"]
    assert brk["location"] == f"{path}:{line}"
    assert "Tensor.item()" in brk["reason"]
    causes = [e["cause"] for e in report["events"]]
    assert any(c["category"] == "graph_break" and c["location"] == f"{path}:{line}" for c in causes)
    assert "Graph breaks (1):" in text and f"graph_break.py:{line}" in text
    assert "Tensor.item()" in text and "torch.where" in text  # the reason and the fix


def test_graph_break_counts_match_torch_xla(graph_break):
    _, report = graph_break
    metrics = _metrics(report)
    assert report["compilations"] == metrics.counter("UncachedCompile")
    # The Dynamo bridge's cached runs bump no ExecuteComputation: ExecuteTime counts them.
    assert report["executions"] == metrics.metrics["ExecuteTime"].total_samples
    # Two graphs a step (before and after the break), every step, cached ones too.
    assert executions_per_step(report) == [2, 2, 2]
    assert report["dynamo"]["extractions"] == metrics.counter("DynamoExtractCompiledGraph")


def test_dynamo_counts_match_a_bare_run(graph_break, bare_graph_break):
    _, report = graph_break
    dynamo, bare = report["dynamo"], bare_graph_break["counters"]
    assert len(dynamo["frames"]) == bare["frames"]["total"]
    assert dynamo["fx_graphs"] == bare["stats"]["unique_graphs"]
    assert sum(b["count"] for b in dynamo["graph_breaks"]) == sum(bare["graph_break"].values())
    assert report["compilations"] == bare_graph_break["UncachedCompile"]
    assert dynamo["counters"]["frames"] == bare["frames"]  # the child saw what a user sees


def test_each_fx_graph_names_its_xla_graphs(graph_break):
    _, report = graph_break
    frames = report["dynamo"]["frames"]
    assert frames[0]["function"] == "forward" and frames[0]["compile_id"] == "0/0"
    assert frames[1]["function"].startswith("torch_dynamo_resume_in_forward_at_")
    hashes = {h for frame in frames for h in frame["graph_hashes"]}
    assert hashes == {graph["hash"] for graph in report["graphs"]}


def test_guard_failure_with_guard_text_and_line(guard):
    text, report = guard
    path = DYNAMO / "guard_recompile.py"
    # A tensor guard has no note of Dynamo's: forward's first read of x.
    read = _line_of(path, "return torch.tanh(self.proj(x))")
    recompiled = [f for f in report["dynamo"]["frames"] if f["guard_failure"]]
    assert [f["step"] for f in recompiled] == [2]
    guard_text = "tensor 'x' size mismatch at index 0. expected 4, actual 6"
    assert recompiled[0]["guard_failure"] == guard_text
    (event,) = [e for e in report["events"] if e["steady_state"]]
    assert event["cause"]["category"] == "dynamo_guard"
    assert event["cause"]["location"] == f"{path}:{read}"
    assert guard_text in event["cause"]["detail"] and "mark_dynamic" in event["cause"]["hint"]
    assert report["compilations"] == _metrics(report).counter("UncachedCompile") == 2
    assert "dynamo_guard" in text and guard_text in text
    assert report["mode"] == "dynamo" and report["dynamo"]["source"] == "xlacli"


def test_a_model_calling_torch_compile_is_reported_as_such(user_compiled):
    text, report = user_compiled
    assert report["mode"] == "lazy"
    dynamo = report["dynamo"]
    assert dynamo["source"] == "user" and dynamo["fx_graphs"] == 1
    assert dynamo["graph_breaks"] == [] and dynamo["recompiles"] == 0
    assert executions_per_step(report) == [1, 1, 1]
    assert report["compilations"] == _metrics(report).counter("UncachedCompile") == 1
    assert "called by the model" in text
    assert [g["trigger"] for g in report["graphs"]] == ["dynamo"]  # PT_XLA_DEBUG's cause
    assert "(torch.compile)" in text


def test_torch_xla_compile_example(tmp_path_factory):
    _, report = _compile(tmp_path_factory, "xc", str(DYNAMO / "xla_compile.py"), "--steps", "2")
    assert report["dynamo"] is None
    assert report["compilations"] == _metrics(report).counter("UncachedCompile") == 1
    assert executions_per_step(report) == [1, 1]
    assert [g["trigger"] for g in report["graphs"]] == ["torch_xla_compile"]


def test_profile_in_dynamo_mode_agrees_with_compile(tmp_path, graph_break):
    """compile says no XLA compile after step 1 (steps 2-3 reuse cached graphs);
    the profile of steps 2-3 must not report one either, and counts every run."""
    _, report = graph_break
    assert [e["step"] for e in report["events"]] == [0, 0, 1]
    summary = _profile(
        tmp_path / "run",
        str(DYNAMO / "graph_break.py"),
        "--mode",
        "dynamo",
        "--steps",
        "2",
        "--warmup",
        "2",
    )
    assert summary["window_compiles"] == 0
    assert not any("inside the profiled window: the warm-up" in n for n in summary["notes"])
    assert sum(g["executions"] for g in summary["graphs"]) == 4  # 2 graphs x 2 steps
    # Dynamo itself retraces the resume frame each step (a guard on the .item() value).
    assert any("Dynamo traced 2 frames again" in note for note in summary["notes"])
    assert summary["mode"] == "dynamo" and summary["tracing_advice"] is None


def test_mode_both_on_the_transformer(tmp_path):
    run = tmp_path / "both"
    result = run_cli(
        "compile",
        "examples/transformer.py",
        "--mode",
        "both",
        "--steps",
        "2",
        "--out",
        run,
        "--html",
        "--max-compiles",
        "0",
        cwd=REPO,
    )
    # The budget is checked on each mode's run, after both tables and pages are written.
    assert result.code == 1, result.stderr
    assert "over the budget of 0" in result.stderr
    assert (run / "lazy" / "report.html").is_file() and (run / "dynamo" / "report.html").is_file()
    for row in (
        "graphs",
        "XLA compiles",
        "total compile time",
        "median step time",
        "HLO instructions (optimized)",
        "peak device bytes",
        "graph breaks",
        "recompiles after warm-up",
        "Dynamo guard recompiles",
    ):
        assert row in result.stdout
    assert "lazy" in result.stdout and "dynamo" in result.stdout
    lazy = json.loads((run / "lazy" / "report.json").read_text())
    dynamo = json.loads((run / "dynamo" / "report.json").read_text())
    assert lazy["mode"] == "lazy" and lazy["dynamo"] is None
    assert dynamo["mode"] == "dynamo" and dynamo["dynamo"]["fx_graphs"] >= 1


def test_lazy_profile_splits_host_time(tmp_path):
    run = tmp_path / "run"
    summary = _profile(run, "examples/mlp.py", "--steps", "3", "--warmup", "1")
    split = summary["host_split"]
    steps = read_events(run / "events.jsonl").steps
    traced = [event.measures for event in steps if event.measures.traced]
    # torch_xla's per-op counters: every op traced bumps its xla::<op> counter once.
    per_step = [sum(n for k, n in m.counters.items() if k.startswith("xla::")) for m in traced]
    assert split["ops_per_step"] == sorted(per_step)[len(per_step) // 2] > 0
    assert 0 < split["op_tracing_s"] == pytest.approx(summary["breakdown"]["op_tracing_s"])
    assert split["user_python_s"] == pytest.approx(summary["breakdown"]["python_s"])
    assert summary["mode"] == "lazy" and summary["notes"] == []
    assert summary["compare_command"].endswith("--mode both")
    if split["tracing_share"] >= 0.5:
        assert summary["compare_command"] in summary["tracing_advice"]


def test_no_openxla_backend_is_one_line_and_exit_2(tmp_path):
    result = run_cli(
        "compile", MODELS / "no_openxla.py", "--mode", "dynamo", "--out", tmp_path / "r", cwd=REPO
    )
    assert_clean_error(result, 2, "needs torch.compile's 'openxla' backend")


def test_check_baseline_records_the_mode_and_catches_a_new_graph_break(tmp_path):
    model = tmp_path / "model.py"
    model.write_text(
        (DYNAMO / "graph_break.py")
        .read_text()
        .replace("if h.sum().item() > 0:  # graph break: Tensor.item()", "if True:")
    )

    def check(*args: str):
        return run_cli(
            "check", "model.py", "--baseline", "ci/b.json", "--steps", "3", *args, cwd=tmp_path
        )

    written = check("--mode", "dynamo", "--update-baseline")
    assert written.code == 0, written.stderr
    baseline = json.loads((tmp_path / "ci" / "b.json").read_text())
    assert (baseline["mode"], baseline["graph_breaks"], baseline["dynamo_recompiles"]) == (
        "dynamo",
        0,
        0,
    )
    assert_clean_error(check("--mode", "lazy"), 2, "recorded with --mode dynamo")
    model.write_text((DYNAMO / "graph_break.py").read_text())  # the .item() branch is back
    regressed = check()  # the baseline's mode
    assert regressed.code == 1, regressed.stderr
    assert "graph breaks" in regressed.stdout and "Dynamo recompiles" in regressed.stdout


def test_profile_mode_both_writes_a_table_and_a_page_per_mode(tmp_path):
    run = tmp_path / "both"
    result = run_cli(
        "profile",
        "examples/mlp.py",
        "--mode",
        "both",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--html",
        "--format",
        "json",
        "--out",
        run,
        cwd=REPO,
    )
    assert result.code == 0, result.stderr
    compared = json.loads(result.stdout)
    assert set(compared["profiles"]) == {"lazy", "dynamo"}
    for mode in ("lazy", "dynamo"):
        assert compared["profiles"][mode]["mode"] == mode
        assert (run / mode / "report.html").is_file()
