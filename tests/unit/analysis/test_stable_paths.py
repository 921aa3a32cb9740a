"""Baseline paths are relative to the project's root (issue 20, item 7)."""

from __future__ import annotations

from pathlib import Path

from xlacli.analysis.check.stable_paths import project_root, stable_location, stable_path


def test_the_project_root_is_the_folder_with_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "ci").mkdir()
    assert project_root(tmp_path / "ci" / "baseline.json") == tmp_path.resolve()
    root = project_root(tmp_path / "ci" / "baseline.json")
    assert stable_location(str(tmp_path / "train.py") + ":12", root) == "train.py:12"
    assert stable_path(str(tmp_path / "src" / "model.py"), root) == "src/model.py"


def test_a_library_file_is_written_from_its_package(tmp_path: Path):
    venv = "/home/someone/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py:134"
    assert stable_location(venv, tmp_path) == "torch/nn/modules/linear.py:134"
    assert stable_location(None, tmp_path) == ""
