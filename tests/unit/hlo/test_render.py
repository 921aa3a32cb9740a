"""The diff-hlo renderers against golden output.

Regenerate the expected files with ``UPDATE_GOLDENS=1 pytest tests/unit/hlo/test_render.py``
and read the change before committing it; never edit them by hand.
"""

from __future__ import annotations

import io
import json
import os

import pytest
from conftest import ASSETS
from rich.console import Console

from xlacli.hlo import HloModule, parse_hlo
from xlacli.hlo.changes import DiffReport
from xlacli.hlo.diff import diff_modules
from xlacli.render.diff import HloDiffView

EXPECTED = ASSETS / "expected"
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"


def _module(name: str, edit: tuple[str, str] = ("", "")) -> HloModule:
    # Parsed under its bare name so the output does not depend on where the tests run.
    return parse_hlo((ASSETS / name).read_text().replace(*edit), name)


def _report(left: str, right: str, edit: tuple[str, str] = ("", "")) -> DiffReport:
    diff = diff_modules(_module(left), _module(right, edit))
    return DiffReport(left, right, "files", None, (diff,))


def _folders_report() -> DiffReport:
    same = diff_modules(
        _module("torch_conv.after_optimizations.txt"), _module("torch_conv.after_optimizations.txt")
    )
    wider = diff_modules(
        _module("torch_mlp_relu.after_optimizations.txt"),
        _module("torch_mlp_wide.after_optimizations.txt"),
        "model.py:31 (5555cccc)",
    )
    return DiffReport(
        "runs/a", "runs/b", "run-folders", "post", (same, wider), right_only=("7777dddd",)
    )


REPORTS = {
    "relu_vs_gelu": lambda: _report(
        "torch_mlp_relu.after_optimizations.txt", "torch_mlp_gelu.after_optimizations.txt"
    ),
    "jax_constant": lambda: _report(
        "jax_cnn.after_optimizations.txt",
        "jax_cnn.after_optimizations.txt",
        ("constant(0.025)", "constant(0.05)"),
    ),
    "identical": lambda: _report(
        "torch_conv.before_optimizations.txt", "torch_conv.before_optimizations.txt"
    ),
    "run_folders": _folders_report,
}


def _text(report: DiffReport, details: bool) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, force_terminal=False)
    console.print(*HloDiffView(report, details).text(console.width))
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines()) + "\n"


def _check(name: str, actual: str) -> None:
    path = EXPECTED / name
    if UPDATE:
        path.parent.mkdir(exist_ok=True)
        path.write_text(actual)
    assert path.exists(), f"{path} is missing: run with UPDATE_GOLDENS=1"
    assert actual.splitlines() == path.read_text().splitlines()


@pytest.mark.parametrize("name", sorted(REPORTS))
@pytest.mark.parametrize("details", [False, True], ids=["summary", "details"])
def test_terminal_output_matches_golden(name: str, details: bool) -> None:
    suffix = ".details" if details else ""
    _check(f"{name}{suffix}.txt", _text(REPORTS[name](), details))


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_json_output_matches_golden(name: str) -> None:
    text = HloDiffView(REPORTS[name]()).json()
    assert json.loads(text)["identical"] is (name == "identical")
    _check(f"{name}.json", text)
