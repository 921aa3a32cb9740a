"""The commands are a thin layer over the Python API (``xlacli.api``).

A command module turns options into API calls and renders what comes back:
it never reaches past the API into the capture, the assembler or the flows,
except for what only a command does (re-launching itself under torchrun,
rank 0 printing a launched run's ranks merged, serving TensorBoard).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLI = Path(__file__).resolve().parents[2] / "xlacli" / "cli"
# Below the API: what a command must reach through it.
BELOW_THE_API = ("xlacli.flows", "xlacli.capture", "xlacli.assemble", "xlacli.child")
# What only a command does, though it lives in flows/.
COMMAND_ONLY = (
    "xlacli.flows.launch",
    "xlacli.flows.ranks",
    "xlacli.flows.tensorboard",
    "xlacli.capture.ranks",  # a launched rank's place, as a type
)


def _imports(path: Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules.extend(alias.name for alias in node.names)
    return modules


COMMANDS = sorted(p for p in CLI.glob("*.py") if p.name not in ("__init__.py", "main.py"))


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_commands_reach_the_machinery_only_through_the_api(path: Path) -> None:
    past_the_api = [
        module
        for module in _imports(path)
        if module.startswith(BELOW_THE_API) and module not in COMMAND_ONLY
    ]
    assert past_the_api == []


def test_every_running_command_calls_the_api() -> None:
    for name in ("compile", "profile", "check", "report", "runs", "diff_hlo"):
        assert "xlacli" in _imports(CLI / f"{name}.py") or "xlacli.api" in _imports(
            CLI / f"{name}.py"
        ), name
