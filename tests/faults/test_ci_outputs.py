"""Every CI output of ``check`` (--junit, --github annotations, the step
summary) on each exit code: 0, 1, 2, 3 and 4 (issue 9, items 8, 10, 11, 13).

A CI reporter reads the JUnit file and the annotations: a check that could
not run must say why there, not leave them empty.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.conftest import MODELS, run_cli

pytestmark = [pytest.mark.faults, pytest.mark.e2e]

CONFIG = '[tool.xlacli]\nmodel = "model.py"\nbaseline = "ci/baseline.json"\nsteps = 3\n'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A configured project whose baseline was recorded from a subfolder."""
    project = tmp_path_factory.mktemp("ci") / "project"
    (project / "src").mkdir(parents=True)
    shutil.copy(MODELS / "gate.py", project / "model.py")
    (project / "pyproject.toml").write_text(CONFIG)
    result = run_cli("check", "--update-baseline", cwd=project / "src")
    assert result.code == 0, result.stderr
    return project


def test_runs_from_a_subfolder_go_under_the_project_root(recorded):
    assert list((recorded / ".xlacli" / "runs").iterdir())
    assert not (recorded / "src" / ".xlacli").exists()


@pytest.fixture
def project(recorded: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(recorded, copy, ignore=shutil.ignore_patterns(".xlacli"))
    return copy


def _edit(project: Path, old: str, new: str) -> None:
    path = project / "model.py"
    path.write_text(path.read_text().replace(old, new))


def _break_forward(project: Path) -> None:
    _edit(project, "out = model(batch)", "out = model(batch)\n        raise ValueError('broken')")


CASES = {
    0: ((), {}, None),
    1: ((), {}, lambda p: _edit(p, "RECOMPILE_FROM = 1000", "RECOMPILE_FROM = 2")),
    2: (("--baseline", "missing.json"), {}, None),
    3: ((), {}, _break_forward),
    4: ((), {"PJRT_DEVICE": "TPU"}, None),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_every_ci_output_on_every_exit_code(project, code):
    args, env, change = CASES[code]
    if change is not None:
        change(project)
    summary = project / "summary.md"
    result = run_cli(
        "check", *args, "--junit", "out/junit.xml", "--github", cwd=project,
        env={"GITHUB_STEP_SUMMARY": str(summary), **env},
    )  # fmt: skip
    assert result.code == code, result.stderr
    suite = ElementTree.parse(project / "out" / "junit.xml").getroot()
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
    text = summary.read_text()
    if code == 0:
        assert suite.get("failures") == suite.get("errors") == "0"
        assert int(suite.get("tests") or 0) > 1
        assert not [line for line in annotations if line.startswith("::error")]
        assert "unchanged" in text
    elif code == 1:
        assert int(suite.get("failures") or 0) >= 1
        assert any(line.startswith("::error") for line in annotations)
        assert "regressed" in text
    else:
        error = suite.find("testcase/error")
        assert error is not None and error.get("type") == f"exit {code}"
        reason = error.get("message") or ""
        assert reason and reason in result.stderr
        assert any(line.startswith("::error title=xlacli check%3A error::") for line in annotations)
        assert f"error (exit {code})" in text
        if code == 3:  # the run folder's check.json says why too (issue 34)
            [run] = (project / ".xlacli" / "runs").iterdir()
            check = json.loads((run / "check.json").read_text())
            assert check["error"]["exit_code"] == 3 and not check["passed"]


def test_settings_other_than_the_baselines_are_a_usage_error(project):
    result = run_cli("check", "--train", cwd=project)
    assert result.code == 2, result.stderr
    assert "recorded with --no-train, this run asks for --train" in result.stderr
    result = run_cli("check", "--steps", "4", cwd=project)
    assert result.code == 2 and "--steps 3" in result.stderr and "--steps 4" in result.stderr
    data = json.loads((project / "ci" / "baseline.json").read_text())
    assert data["steps"] == 3  # untouched
