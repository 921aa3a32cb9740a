"""A real model whose recompile is a removed node: the report is written and the
removed node is located (issue 20, item 9: the locator raised on it)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ASSETS, REPO, run_cli

pytestmark = pytest.mark.e2e


def test_resnet18_eval_two_steps_reports(tmp_path):
    pytest.importorskip("torchvision")
    model = ASSETS / "models" / "resnet18_eval.py"
    result = run_cli(
        "compile", model, "--steps", "2", "--out", tmp_path / "run", "--format", "json", cwd=REPO
    )
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert (tmp_path / "run" / "report.json").is_file()
    assert report["compilations"] == len(report["events"]) >= 1
    assert report["steady_state_compiles"] == 0
