"""Every command with a space and non-ASCII letters in every path: the working
directory, the model file's name, --out, --logdir, the baseline (issue 9, item 1).

XLA reads its dump folder from XLA_FLAGS, which it splits on spaces; a run
folder with a space in its path once crashed every run with SIGABRT.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, run_cli

pytestmark = [pytest.mark.faults, pytest.mark.e2e]

MODEL_NAME = "mo del é.py"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project folder with a space and accents, holding a model with both too."""
    folder = tmp_path_factory.mktemp("odd") / "pro jé ct ü"
    folder.mkdir()
    shutil.copy(EXAMPLES / "mlp.py", folder / MODEL_NAME)
    return folder


@pytest.fixture(scope="module")
def compiled(project: Path) -> Path:
    """``compile`` into the default run folder (under the odd working directory)."""
    result = run_cli("compile", MODEL_NAME, "--steps", "2", cwd=project)
    assert result.code == 0, result.stderr
    (run,) = (project / ".xlacli" / "runs").iterdir()
    return run


def test_compile_keeps_every_graph_file(compiled):
    report = json.loads((compiled / "report.json").read_text())
    assert report["error"] is None and report["compilations"] == 1
    files = report["graphs"][0]["files"]
    for kind in ("ir", "hlo_before", "hlo_after", "buffer_assignment"):
        assert (compiled / files[kind]).is_file(), kind


def test_report_and_diff_hlo_read_the_odd_run_folder(project, compiled):
    result = run_cli("report", compiled, cwd=project)
    assert result.code == 0, result.stderr
    assert "1 compilation" in result.stdout
    hlo = (
        compiled
        / json.loads((compiled / "report.json").read_text())["graphs"][0]["files"]["hlo_before"]
    )
    result = run_cli("diff-hlo", hlo, hlo, cwd=project)
    assert result.code == 0, result.stderr


def test_profile_with_odd_out_and_logdir(project):
    out, logdir = project / "prö file", project / "lög dir"
    result = run_cli(
        "profile", MODEL_NAME, "--steps", "2", "--warmup", "1", "--out", out,
        "--logdir", logdir, "--name", "séssion one", cwd=project,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert list((logdir / "plugins" / "profile" / "séssion one").glob("*.xplane.pb"))
    summary = json.loads((out / "profile.json").read_text())
    assert summary["steps"] == 2
    assert run_cli("report", out, cwd=project).code == 0


def test_check_with_an_odd_baseline_path(project):
    baseline = "ci ü/base line.json"
    args = ("check", MODEL_NAME, "--baseline", baseline, "--steps", "2", "--warmup", "1")
    first = run_cli(*args, "--update-baseline", "--out", "chéck 1", cwd=project)
    assert first.code == 0, first.stderr
    second = run_cli(*args, "--out", "chéck 2", cwd=project)
    assert second.code == 0, second.stderr
    # Relative to the project root (where the check runs), not to the baseline's folder.
    assert json.loads((project / baseline).read_text())["model"] == MODEL_NAME
