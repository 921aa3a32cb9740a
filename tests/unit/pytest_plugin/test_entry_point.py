"""The plugin is registered through the ``pytest11`` entry point pyproject.toml declares."""

from __future__ import annotations

import importlib
import os
import sys
from importlib import metadata

import pytest

from tests.conftest import REPO, imported_after

pytest_plugins = ["pytester"]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _declared() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return project["entry-points"]["pytest11"]


def test_pyproject_declares_the_plugin_module() -> None:
    # Named after the module: ``-p xlacli.pytest_plugin`` (which registers the module
    # under its own name) and the entry point are then one plugin, never two.
    assert _declared() == {"xlacli.pytest_plugin": "xlacli.pytest_plugin"}
    plugin = importlib.import_module(_declared()["xlacli.pytest_plugin"])
    for hook in ("pytest_addoption", "pytest_load_initial_conftests", "pytest_runtest_call"):
        assert callable(getattr(plugin, hook))


def test_installed_metadata_matches() -> None:
    points = {ep.name: ep.value for ep in metadata.entry_points(group="pytest11")}
    if "xlacli.pytest_plugin" not in points:
        pytest.skip("xlacli's metadata predates the plugin: rerun pip install -e .")
    assert points == {**points, **_declared()}


def test_importing_the_plugin_is_cheap() -> None:
    assert imported_after("import xlacli.pytest_plugin", ("torch", "torch_xla", "rich")) == []


@pytest.fixture
def installed(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester folder whose sessions see the entry point as pip would install it:
    a distribution's ``entry_points.txt`` on the path, beside this checkout."""
    info = pytester.mkdir("site") / "xlacli_entry-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: xlacli-entry\nVersion: 0.0\n")
    points = "".join(f"{name} = {value}\n" for name, value in _declared().items())
    (info / "entry_points.txt").write_text(f"[pytest11]\n{points}")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(info.parent)]))
    return pytester


@pytest.mark.parametrize(
    ("args", "loaded"),
    [
        ((), True),  # discovered through the entry point
        (("-p", "xlacli.pytest_plugin"), True),  # named as well: still one plugin
        (("-p", "no:xlacli.pytest_plugin"), False),  # blocked by its entry point's name
    ],
)
def test_entry_point_discovery(installed: pytest.Pytester, args: tuple, loaded: bool) -> None:
    result = installed.runpytest_subprocess(*args, "--help")
    assert result.ret == 0, result.stderr.str()
    assert ("--xla-compiles" in result.stdout.str()) is loaded
    assert "already registered" not in result.stderr.str()
