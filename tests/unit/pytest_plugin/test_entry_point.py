"""The plugin is registered through the ``pytest11`` entry point pyproject.toml declares."""

from __future__ import annotations

import importlib
import sys
from importlib import metadata

import pytest

from tests.conftest import REPO

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _declared() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["entry-points"]["pytest11"]


def test_pyproject_declares_the_plugin_module() -> None:
    assert _declared() == {"xlacli": "xlacli.pytest_plugin"}
    plugin = importlib.import_module(_declared()["xlacli"])
    for hook in ("pytest_addoption", "pytest_load_initial_conftests", "pytest_runtest_call"):
        assert callable(getattr(plugin, hook))


def test_installed_metadata_matches() -> None:
    points = {ep.name: ep.value for ep in metadata.entry_points(group="pytest11")}
    if "xlacli" not in points:
        pytest.skip("xlacli's metadata predates the plugin: rerun pip install -e .")
    assert points["xlacli"] == _declared()["xlacli"]


def test_importing_the_plugin_is_cheap() -> None:
    import subprocess

    code = (
        "import sys, xlacli.pytest_plugin; "
        "print(sorted(m for m in ('torch', 'torch_xla', 'rich') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "[]"
