"""Everything downstream of a capture on a script run: ``profile`` (the trace
window over steps warmup..warmup+steps, then stop), ``check`` configured by
``[tool.xlacli]`` with ``script_args``, ``report`` and ``diff-hlo`` on its
run folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

pytestmark = pytest.mark.e2e
SCRIPT = EXAMPLES / "scripts" / "train_compiled.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A project whose pyproject names the script, its arguments and a baseline;
    the baseline written by a first check."""
    folder = tmp_path_factory.mktemp("project")
    shutil.copy(SCRIPT, folder / "train.py")
    (folder / "pyproject.toml").write_text(
        '[tool.xlacli]\nmodel = "train.py"\n'
        'script_args = ["--batch-size", "4", "--samples", "40"]\n'
        'steps = 3\nbaseline = "baseline.json"\n'
    )
    result = run_cli("check", "--update-baseline", "--out", folder / "first", cwd=folder)
    assert result.code == 0, result.stderr
    return folder


@pytest.fixture(scope="module")
def second(project) -> Path:
    """A second check of the configured script against the baseline the first wrote
    (a fixture, not a test's side effect: the tests reading it may run alone)."""
    result = run_cli("check", "--out", project / "second", "--format", "json", cwd=project)
    assert result.code == 0, result.stderr
    return project / "second"


def test_check_reruns_the_configured_script_and_passes(project, second):
    baseline = json.loads((project / "baseline.json").read_text())
    assert baseline["steps"] == 3
    report = json.loads((project / "second" / "report.json").read_text())
    assert report["steps"] == 3
    request = json.loads((project / "second" / "request.json").read_text())
    assert request["script_args"] == ["--batch-size", "4", "--samples", "40"]


def test_report_and_diff_hlo_work_on_script_runs(project, second):
    shown = run_cli("report", project / "second")
    assert shown.code == 0, shown.stderr
    assert "train.py:" in shown.stdout
    diff = run_cli("diff-hlo", project / "first", project / "second")
    assert diff.code == 0, diff.stdout + diff.stderr
    assert "identical" in diff.stdout


def test_profile_traces_the_steps_after_the_warmup_then_stops(tmp_path):
    result = run_cli(
        "profile", SCRIPT, "--steps", "3", "--warmup", "2", "--out", tmp_path / "run",
        "--format", "json", "--", "--batch-size", "4", "--samples", "40",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    summary = json.loads(result.stdout)
    assert (summary["warmup"], summary["steps"]) == (2, 3)
    assert summary["window_compiles"] == 0
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["steps"] == 5  # of 10 batches: stopped after the window
