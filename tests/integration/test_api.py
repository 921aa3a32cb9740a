"""The Python API: the commands' machinery, called from Python (one capture shared)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import runpy
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import xlacli
from tests.conftest import EXAMPLES, MODELS, imported_after, run_cli
from tests.recorded_cli import recorded_children
from xlacli import api
from xlacli.analysis.check.baseline import baseline_from_report, write_baseline
from xlacli.errors import CheckFailed, ModelError, UsageError
from xlacli.report.run_report import SCHEMA_VERSION, RunReport

INPUT_SHAPE = EXAMPLES / "recompile" / "input_shape.py"


@pytest.fixture(autouse=True)
def _recorded_children() -> Iterator[None]:
    """The API's capture children replay their recordings, as the commands' do."""
    with recorded_children():
        yield


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> RunReport:
    out = tmp_path_factory.mktemp("api") / "run"
    with recorded_children():
        return xlacli.compile(INPUT_SHAPE, steps=5, out=out)


@pytest.mark.e2e
def test_compile_returns_the_explained_report(compiled: RunReport) -> None:
    assert isinstance(compiled, RunReport)
    assert compiled.schema_version == SCHEMA_VERSION
    assert compiled.steps == 5 and compiled.error is None
    steady = [event for event in compiled.events if event.steady_state]
    assert [event.cause.category for event in steady] == ["input_shape"]
    assert steady[0].step == 3
    assert steady[0].cause.location is not None
    assert steady[0].cause.location.endswith("input_shape.py:21")  # the get_inputs line


@pytest.mark.e2e
def test_compile_is_what_the_command_reports(compiled: RunReport, tmp_path: Path) -> None:
    out = tmp_path / "r"
    result = run_cli("compile", INPUT_SHAPE, "--steps", "5", "--format", "json", "--out", out)
    assert result.code == 0, result.stderr
    command = json.loads(result.stdout)
    assert [g["hash"] for g in command["graphs"]] == [g.hash for g in compiled.graphs]
    assert [
        (e["step"], e["cause"]["category"], e["cause"]["location"]) for e in command["events"]
    ] == [(e.step, e.cause.category, e.cause.location) for e in compiled.events]


@pytest.mark.e2e
def test_load_report_reads_what_compile_saved(compiled: RunReport) -> None:
    assert xlacli.load_report(compiled.run_dir) == compiled
    assert xlacli.load_report(Path(compiled.run_dir) / "report.json") == compiled


@pytest.mark.e2e
def test_diff_hlo_of_run_folders(compiled: RunReport) -> None:
    same = xlacli.diff_hlo(compiled.run_dir, compiled.run_dir)
    assert same.identical and same.inputs == "run-folders"
    graphs = sorted(Path(compiled.run_dir, "graphs").iterdir())
    short, long = (graph / "hlo.before.txt" for graph in graphs[:2])
    changed = xlacli.diff_hlo(short, long)
    assert not changed.identical
    assert changed.inputs == "files"
    first, second = (graph.hash[:8] for graph in compiled.graphs[:2])  # RUN HASH HASH
    assert not xlacli.diff_hlo(compiled.run_dir, first, second).identical


@pytest.mark.e2e
def test_profile_returns_report_and_summary(tmp_path: Path) -> None:
    result = xlacli.profile(EXAMPLES / "mlp.py", steps=2, warmup=1, out=tmp_path / "run")
    assert result.summary.steps == 2
    assert result.summary.run_dir == result.report.run_dir
    assert result.report.graphs
    assert (tmp_path / "run" / "profile.json").exists()
    assert api.load_profile(result.report.run_dir) == result.summary
    assert result.error is None


def test_bad_target_raises_the_commands_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="model file not found"):
        xlacli.compile(tmp_path / "missing.py")
    with pytest.raises(UsageError, match="expected 'lazy' or 'dynamo'"):
        xlacli.compile(EXAMPLES / "mlp.py", mode="both")
    with pytest.raises(UsageError, match="not an xlacli run folder"):
        xlacli.load_report(tmp_path)
    with pytest.raises(xlacli.XlacliError):
        xlacli.diff_hlo(tmp_path / "a.txt", tmp_path / "b.txt")


def test_import_xlacli_stays_light() -> None:
    statement = "import xlacli; f = xlacli.compile; r = xlacli.RunReport"
    assert imported_after(statement, ("torch", "torch_xla", "typer")) == []
    assert {"compile", "profile", "check", "load_report", "diff_hlo"} <= set(dir(xlacli))
    statement = "from xlacli import api; r = api.Run; c = api.CheckRun; e = api.RunEntry"
    assert imported_after(statement, ("torch", "torch_xla", "typer")) == []
    with pytest.raises(AttributeError):
        _ = xlacli.no_such_name  # type: ignore[attr-defined]


# What the commands stand on: the API's lower level (tests of the commands
# themselves run them through it).


@pytest.mark.e2e
def test_compile_run_returns_the_error_with_the_partial_report(tmp_path: Path) -> None:
    run = api.compile_run(MODELS.parent / "scripts" / "raises.py", out=tmp_path / "run")
    assert isinstance(run.error, ModelError)
    assert "loss went bad" in run.error.message
    assert run.report.steps == 2  # the steps before the raise, reported
    assert run.report.error is not None and run.report.error.exit_code == run.error.exit_code
    assert run.run_dir == Path(run.report.run_dir)
    with pytest.raises(ModelError, match="loss went bad"):
        run.raise_error()


@pytest.mark.e2e
def test_check_judges_a_run_against_its_baseline(compiled: RunReport, tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    recorded = baseline_from_report(compiled, path, "sgd")
    # A baseline one compile below this run's: the check regresses on compilations.
    write_baseline(dataclasses.replace(recorded, compilations=recorded.compilations - 1), path)
    checked = xlacli.check(INPUT_SHAPE, baseline=path, steps=5, out=tmp_path / "run")
    assert checked.error is None and checked.written is None
    assert checked.outcome is not None
    assert [r.name for r in checked.outcome.regressions] == ["compilations"]
    failure = checked.failure()
    assert failure is not None and failure.exit_code == 1
    assert "regressed: compilations" in failure.message
    assert (tmp_path / "run" / "check.json").exists()  # as the command keeps it


@pytest.mark.e2e
def test_budgets_and_mode_comparisons_raise_the_commands_errors(compiled: RunReport) -> None:
    api.check_budgets(compiled, max_compiles=compiled.compilations)
    with pytest.raises(CheckFailed, match="over the budget"):
        api.check_budgets(compiled, max_compiles=compiled.compilations - 1)
    with pytest.raises(CheckFailed, match="1 steady-state recompile: step 3 input_shape"):
        api.check_budgets(compiled, fail_on_recompile=True)
    failed = api.Run(compiled, ModelError("dynamo failed", hint="try lazy"))
    both = api.ModeComparison({"lazy": api.Run(compiled), "dynamo": failed}, {})
    with pytest.raises(ModelError, match="dynamo failed"):
        both.raise_error()


@pytest.mark.e2e
def test_saved_runs_are_listed_found_and_removed(compiled: RunReport, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    copy = runs / "copied"
    shutil.copytree(compiled.run_dir, copy)
    [entry] = api.list_runs(runs)
    assert (entry.path, entry.command, entry.failed) == (copy, "compile", False)
    assert api.find_run(copy) == copy
    assert [g.hash for g in api.load_report(copy).graphs] == [g.hash for g in compiled.graphs]
    assert api.load_profile(copy) is None  # not profiled
    assert [e.path for e in api.remove_runs(keep=0, runs=api.list_runs(runs))] == [copy]
    assert not copy.exists()


@pytest.mark.e2e
def test_a_gate_of_ones_own_on_the_api(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Run as `python compile_gate.py` runs it, in this process: its capture replays.
    gate = EXAMPLES / "api" / "compile_gate.py"
    monkeypatch.setattr(sys, "argv", [str(gate)])
    monkeypatch.chdir(tmp_path)
    stdout, stderr = io.StringIO(), io.StringIO()
    with (
        pytest.raises(SystemExit) as exited,
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        runpy.run_path(str(gate), run_name="__main__")
    assert exited.value.code == 1, stderr.getvalue()  # as xlacli compile --fail-on-recompile
    assert "step 3: input_shape at " in stdout.getvalue()
    assert "input_shape.py:21" in stdout.getvalue()  # the get_inputs line
    assert "gate: 1 steady-state recompile: step 3 input_shape" in stderr.getvalue()
