"""What a newcomer meets: the verdict first, runs by name, suggestions worth
running, and options that are never silently ignored (issue 27)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO, CliResult, assert_clean_error, run_cli

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A working folder with one dynamic_shapes run under .xlacli/runs."""
    folder = tmp_path_factory.mktemp("project")
    result = run_cli("compile", EXAMPLES / "dynamic_shapes.py", "--steps", "4", cwd=folder)
    assert result.code == 0, result.stderr
    return folder


@pytest.fixture(scope="module")
def compiled(project) -> CliResult:
    return run_cli("report", cwd=project)  # no RUN: the latest


def _run(project: Path) -> Path:
    (run,) = (project / ".xlacli" / "runs").iterdir()
    return run


def test_the_report_opens_with_its_verdict(compiled):
    first = compiled.stdout.splitlines()[0]
    assert first.startswith("1 steady-state recompile: ")
    assert "dynamic_shapes.py:36, input 0 shape s64[4,16] -> s64[4,24]" in first


def test_next_is_a_short_diff_of_the_recompiled_graphs(compiled, project):
    report = json.loads((_run(project) / "report.json").read_text())
    steady = next(e for e in report["events"] if e["steady_state"])
    before, after = steady["compared_with"][:8], steady["graph_hash"][:8]
    (line,) = [line for line in compiled.stdout.splitlines() if line.startswith("Next:")]
    assert line.endswith(f"{before} {after}")
    assert len(line) < 100
    command = line.removeprefix("Next: ").split()
    diff = run_cli(*command[1:], cwd=project)
    assert diff.code == 1, diff.stderr  # the graphs differ
    assert "s64[4,16]" in diff.stdout
    # Each change at the user's line, torch.nn's line beside it; none at xlacli's own.
    linear = "examples/dynamic_shapes.py:24 (inside torch/nn/modules/linear.py:"
    assert linear in diff.stdout, diff.stdout
    assert "child/steps.py" not in diff.stdout, diff.stdout


def test_a_hash_prefix_naming_no_graph_lists_the_graphs(project):
    result = run_cli("diff-hlo", _run(project), "ffffffff", "0000", cwd=project)
    assert_clean_error(result, 2, "ffffffff names no graph", "its graphs: ")


def test_report_by_name_and_a_name_that_does_not_exist(project):
    name = _run(project).name
    assert run_cli("report", name, "--format", "json", cwd=project).code == 0
    result = run_cli("report", "dynamic_shapes-nope", cwd=project)
    assert_clean_error(result, 2, "dynamic_shapes-nope does not exist", name)


def test_a_file_that_is_no_run(tmp_path, project):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    result = run_cli("report", notes, cwd=project)
    assert_clean_error(result, 2, "is not an xlacli run folder or report.json")
    assert "Expecting value" not in result.stderr


def test_runs_lists_name_command_verdict_and_age(project):
    result = run_cli("runs", cwd=project)
    assert result.code == 0, result.stderr
    assert _run(project).name in result.stdout
    assert "compile" in result.stdout and "1 steady-state recompile" in result.stdout


@pytest.mark.parametrize(
    ("args", "written"),
    [
        (["--output", "r.json"], "json"),
        (["--format", "json", "--output", "r2.json"], "json"),
        (["--output", "r.txt"], "text"),
        (["--output", "r.html"], "html"),
    ],
)
def test_report_output_is_written_in_the_format_its_suffix_names(project, args, written):
    result = run_cli("report", *args, cwd=project)
    assert result.code == 0, result.stderr
    text = (project / args[-1]).read_text()
    starts = {"json": "{", "text": "1 steady-state recompile", "html": "<!doctype html>"}
    assert text.lstrip().startswith(starts[written]), text[:80]


def test_a_format_contradicting_the_output_suffix_is_refused(project):
    result = run_cli("report", "--format", "json", "--output", "x.html", cwd=project)
    assert_clean_error(result, 2, "--format json but --output x.html names a .html file")


def test_report_with_no_run_yet(tmp_path):
    assert_clean_error(run_cli("report", cwd=tmp_path), 2, "no run yet in .xlacli/runs")


def test_remove_failed_and_keep(tmp_path, project):
    # A failed run beside the good one: --remove-failed takes only it.
    failed = run_cli("compile", REPO / "tests/assets/models/bad/no_model.py", cwd=project)
    assert failed.code == 6
    removed = run_cli("runs", "--remove-failed", cwd=project)
    assert removed.code == 0 and "1 removed, 1 kept" in removed.stderr
    assert len(list((project / ".xlacli" / "runs").iterdir())) == 1


def test_diff_hlo_of_files_that_are_not_hlo():
    result = run_cli("diff-hlo", REPO / "README.md", REPO / "pyproject.toml")
    assert_clean_error(result, 2, "README.md is not HLO", "diff-hlo compares HLO text files")


# --- newcomer inputs nobody tried (issue 27): one line, exit 2, the nearest right thing ---


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("exmaples/mlp.py", "examples/mlp.py"), ("examples/mpl.py", "examples/mlp.py"),
     ("examples/mlp", "examples/mlp.py")],
)  # fmt: skip
def test_a_model_path_one_typo_away_is_named(typed, meant):
    result = run_cli("compile", typed, cwd=REPO)
    assert_clean_error(result, 2, f"model file not found: {typed} (did you mean {meant}?)")


def test_run_names_and_folders_near_a_run(project):
    run = _run(project)
    model = "dynamic_shapes"  # the model's name alone: the newest run of it
    result = run_cli("report", model, cwd=project)
    assert_clean_error(result, 2, f"{model} does not exist (did you mean {run.name}?)")
    inside = run_cli("report", run / "graphs", cwd=project)
    assert_clean_error(inside, 2, f"it is inside the run folder {run}", f"xlacli report {run}")
    typo = run_cli("diff-hlo", run, run.with_name(run.name[:-1] + "x"), cwd=project)
    assert_clean_error(typo, 2, "no such file or folder (did you mean ")


def test_diff_hlo_takes_a_runs_name(project):
    report = json.loads((_run(project) / "report.json").read_text())
    hashes = [graph["hash"][:8] for graph in report["graphs"]]
    result = run_cli("diff-hlo", _run(project).name, *hashes, cwd=project)
    assert result.code == 1, result.stderr  # the two graphs differ


def test_odd_files_given_as_a_model(tmp_path):
    (tmp_path / "weights.py").write_bytes(b"\x00\x01\x02PK")
    binary = run_cli("compile", "weights.py", cwd=tmp_path)
    assert_clean_error(binary, 2, "weights.py is not Python source")
    (tmp_path / "model.ipynb").write_text("{}")
    notebook = run_cli("compile", "model.ipynb", cwd=tmp_path)
    assert_clean_error(notebook, 2, "not a Python file", "jupyter nbconvert --to script")


def test_the_run_folder_flag_on_a_command_that_writes_a_file(project):
    result = run_cli("report", "-o", "page.html", cwd=project)
    assert_clean_error(result, 2, "no such option: -o (did you mean --output FILE?")
    assert "Usage:" not in result.stderr and len(result.stderr.splitlines()) == 2


def test_an_output_that_cannot_be_written(project, tmp_path):
    (tmp_path / "file").write_text("")
    result = run_cli("report", "--output", tmp_path / "file" / "page.html", cwd=project)
    assert_clean_error(result, 2, "cannot write")
