"""``xlacli check``: a baseline passes against itself, regressions and
improvements fail with exit 1, bad baselines exit 2."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import MODELS, assert_clean_error, run_cli

GATE = MODELS / "gate.py"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with the gate model as model.py."""
    shutil.copy(GATE, tmp_path / "model.py")
    return tmp_path


def edit(project: Path, old: str, new: str) -> None:
    path = project / "model.py"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def line_of(project: Path, fragment: str) -> int:
    lines = (project / "model.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if fragment in line)


def check(project: Path, *args: str):
    return run_cli("check", "model.py", "--baseline", "ci/baseline.json", *args, cwd=project)


# -- no capture needed: the baseline is refused before the model runs --------


def test_missing_baseline(project):
    assert_clean_error(
        check(project), 2, "baseline ci/baseline.json does not exist", "--update-baseline"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON (line 1"),
        ('{"hello": 1}', "is not an xlacli baseline"),
        ('{"baseline_version": 99}', "has version 99; this xlacli reads version 1"),
        (
            '{"baseline_version": 1, "model": "other.py", "device": "CPU", "steps": 5, '
            '"warmup": 2, "train": false, "compilations": 1, "distinct_graphs": 1, '
            '"steady_state_compiles": 0, "executions_per_step": [1, 1, 1, 1, 1]}',
            "was recorded for other.py, not for this model",
        ),
        ('{"baseline_version": 1, "model": "model.py"}', "is malformed"),
    ],
)
def test_bad_baselines(project, content, message):
    (project / "ci").mkdir()
    (project / "ci" / "baseline.json").write_text(content)
    assert_clean_error(check(project), 2, message)


def test_no_model_and_no_config(tmp_path):
    result = run_cli("check", cwd=tmp_path)
    assert_clean_error(result, 2, "no model to check", "[tool.xlacli]")


def test_bad_config(project):
    (project / "pyproject.toml").write_text('[tool.xlacli]\nmodel = "model.py"\nsteps = "five"\n')
    assert_clean_error(run_cli("check", cwd=project), 2, "steps must be an integer")


# -- with captures ------------------------------------------------------------


@pytest.mark.e2e
def test_baseline_is_byte_identical_and_passes_against_itself(project):
    assert check(project, "--update-baseline").code == 0
    first = (project / "ci" / "baseline.json").read_bytes()
    assert check(project, "--update-baseline").code == 0
    assert (project / "ci" / "baseline.json").read_bytes() == first
    text = first.decode()
    assert str(project) not in text and "/tmp" not in text  # no absolute paths
    data = json.loads(text)
    assert data["model"] == "model.py"  # relative to the project's root, not ci/
    assert all(not key.startswith("..") for key in data["graphs"]), data["graphs"]
    assert list(data) == sorted(data)
    assert not re.search(r"time|date|host", text)
    result = check(project, "--junit", "junit.xml")
    assert result.code == 0, result.stderr
    assert "0 regressed, 0 improved" in result.stdout
    junit = (project / "junit.xml").read_text()
    assert 'failures="0"' in junit and junit.count("<testcase") >= 5


@pytest.mark.e2e
def test_regression_fails_and_names_the_line(project):
    assert check(project, "--update-baseline").code == 0
    edit(project, "RECOMPILE_FROM = 1000", "RECOMPILE_FROM = 3")
    summary = project / "summary.md"
    result = run_cli(
        "check",
        "model.py",
        "--baseline",
        "ci/baseline.json",
        "--junit",
        "junit.xml",
        "--github",
        cwd=project,
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert_clean_error(result, 1, "regressed", "compilations")
    line = line_of(project, "out = out * 2 + 1")
    assert f"graph_structure  model.py:{line}" in result.stdout
    assert "│ out = out * 2 + 1" in result.stdout
    assert (
        f"::error file=model.py,line={line},title=xlacli%3A recompile::graph_structure"
        in result.stdout
    )
    assert "regressed" in summary.read_text() and f"model.py:{line}" in summary.read_text()
    junit = (project / "junit.xml").read_text()
    assert "<failure" in junit and 'name="steady-state graph changes"' in junit


@pytest.mark.e2e
def test_host_sync_regression_counts_graphs_per_step(project):
    assert check(project, "--update-baseline").code == 0
    edit(project, "READ_VALUE = False", "READ_VALUE = True")
    result = check(project, "--format", "json")
    assert result.code == 1
    data = json.loads(result.stdout)
    changed = {c["name"]: c for c in data["checks"] if c["status"] != "ok"}
    assert changed["executions per step"]["status"] == "regression"
    assert changed["fallback op aten::_local_scalar_dense"]["detail"] == "new"


@pytest.mark.e2e
def test_improvement_asks_for_an_update(project):
    edit(project, "RECOMPILE_FROM = 1000", "RECOMPILE_FROM = 3")
    assert check(project, "--update-baseline").code == 0
    edit(project, "RECOMPILE_FROM = 3", "RECOMPILE_FROM = 1000")
    result = check(project)
    assert_clean_error(result, 1, "improved beyond the tolerance", "--update-baseline")
    assert check(project, "--allow-improvements").code == 0


@pytest.mark.e2e
def test_settings_from_pyproject(project):
    (project / "pyproject.toml").write_text(
        '[tool.xlacli]\nmodel = "model.py"\nsteps = 4\nwarmup = 1\nbaseline = "ci/baseline.json"\n'
    )
    result = run_cli("check", "--update-baseline", cwd=project)
    assert result.code == 0, result.stderr
    data = json.loads((project / "ci" / "baseline.json").read_text())
    assert (data["steps"], data["warmup"]) == (4, 1)
    result = run_cli("check", cwd=project)
    assert result.code == 0, result.stderr
    result = run_cli("check", "--time-budget", "0.000001", cwd=project)
    assert_clean_error(result, 1, "compile time")


@pytest.mark.e2e
def test_an_edit_above_the_model_is_not_a_change(project):
    assert check(project, "--update-baseline").code == 0
    edit(project, '"""The CI gate', '# A comment that moves every line down.\n"""The CI gate')
    result = check(project)
    assert result.code == 0, result.stdout + result.stderr


@pytest.mark.e2e
def test_optimizer_is_recorded_and_outputs_stay_parseable(project):
    assert check(project, "--update-baseline", "--train", "--optimizer", "adamw").code == 0
    data = json.loads((project / "ci" / "baseline.json").read_text())
    assert (data["train"], data["optimizer"]) == (True, "adamw")
    result = check(project, "--format", "json", "--github", "--junit", "junit.xml")
    assert result.code == 0, result.stderr  # adamw again, from the baseline
    assert json.loads(result.stdout)["passed"]  # stdout is only JSON, annotations or not


@pytest.mark.e2e
def test_allowed_improvements_pass_in_junit_too(project):
    edit(project, "RECOMPILE_FROM = 1000", "RECOMPILE_FROM = 3")
    assert check(project, "--update-baseline").code == 0
    edit(project, "RECOMPILE_FROM = 3", "RECOMPILE_FROM = 1000")
    result = check(
        project, "--allow-improvements", "--junit", "junit.xml", "--github", "--format", "json"
    )
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout)["improvements"] >= 1
    assert "::warning" in result.stderr
    junit = (project / "junit.xml").read_text()
    assert 'failures="0"' in junit and "improvement (allowed)" in junit


def test_a_script_run_with_other_arguments_is_a_settings_mismatch(tmp_path):
    """Issue 20, item 8: `--batch-size 128` against a baseline of 256 is not an
    improvement, it is another run (exit 2, before anything runs)."""
    (tmp_path / "train.py").write_text("import torch_xla\n")
    (tmp_path / "ci").mkdir()
    baseline = {
        "baseline_version": 1, "model": "train.py", "device": "CPU", "steps": 3, "warmup": 2,
        "train": False, "compilations": 1, "distinct_graphs": 1, "steady_state_compiles": 0,
        "executions_per_step": [1, 1, 1], "script_args": ["--batch-size", "256"],
    }  # fmt: skip
    (tmp_path / "ci" / "baseline.json").write_text(json.dumps(baseline))
    result = run_cli(
        "check", "train.py", "--baseline", "ci/baseline.json", "--", "--batch-size", "128",
        cwd=tmp_path,
    )  # fmt: skip
    assert_clean_error(result, 2, "the script's arguments `--batch-size 256`", "`--batch-size 128`")
