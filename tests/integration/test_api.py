"""The Python API: the commands' machinery, called from Python (one capture shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import xlacli
from tests.conftest import EXAMPLES, imported_after, run_cli
from xlacli.errors import UsageError
from xlacli.report.run import SCHEMA_VERSION, RunReport


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> RunReport:
    out = tmp_path_factory.mktemp("api") / "run"
    return xlacli.compile(EXAMPLES / "recompile" / "input_shape.py", steps=5, out=out)


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
    model = EXAMPLES / "recompile" / "input_shape.py"
    result = run_cli("compile", model, "--steps", "5", "--format", "json", "--out", tmp_path / "r")
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


@pytest.mark.e2e
def test_profile_returns_report_and_summary(tmp_path: Path) -> None:
    result = xlacli.profile(EXAMPLES / "mlp.py", steps=2, warmup=1, out=tmp_path / "run")
    assert result.summary.steps == 2
    assert result.summary.run_dir == result.report.run_dir
    assert result.report.graphs
    assert (tmp_path / "run" / "profile.json").exists()


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
    assert {"compile", "profile", "load_report", "diff_hlo"} <= set(dir(xlacli))
    with pytest.raises(AttributeError):
        _ = xlacli.no_such_name  # type: ignore[attr-defined]
