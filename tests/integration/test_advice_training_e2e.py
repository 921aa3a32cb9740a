"""Advice that sees the whole training step (issue 37), on models written for it under
tests/assets/models/advice/: the backward pass at the forward lines it differentiates,
one bucket advice per site that keeps training right, and value reads torch_xla makes
for the user."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import ASSETS, Capture
from xlacli.parse.hlo_stacks import read_hlo_stacks

pytestmark = pytest.mark.e2e
MODELS = ASSETS / "models" / "advice"
DATA = "(data and constants: parameters, inputs)"


def line_of(path: Path, fragment: str) -> str:
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if fragment in line)
    return f"{path.relative_to(ASSETS.parent.parent)}:{number}"


@pytest.fixture(scope="module")
def trained(capture_once) -> Capture:
    captured = capture_once("compile", MODELS / "trained_stack.py", "--steps", "2")
    assert captured.result.code == 0, captured.result.stderr
    return captured


def _portable(location: str | None) -> str | None:
    root = str(ASSETS.parent.parent) + "/"
    return location.replace(root, "") if location else location


def test_the_backward_pass_is_at_the_forward_lines_it_differentiates(trained: Capture) -> None:
    cost = trained.report["compile_cost"]
    lines = {_portable(line["location"]): line for line in cost["lines"]}
    # The graphs' own ops by kind: what the data bucket may hold is parameters,
    # inputs and constants, nothing the backward pass made.
    kinds: Counter[str] = Counter()
    for graph in trained.report["graphs"]:
        for op in read_hlo_stacks(trained.run / graph["files"]["hlo_stacks"]) or ():
            kinds["data" if op.op_type in ("xla__device_data", "prim__Constant") else "op"] += 1
    data = lines[None]["hlo_instructions"]
    assert data <= kinds["data"], (data, kinds)
    assert data < 0.1 * cost["hlo_instructions"]
    # The MLP's line: its forward ops and the ones that differentiate it.
    mlp = lines[line_of(MODELS / "trained_stack.py", "# the MLP")]
    assert 0 < mlp["backward_hlo_instructions"] < mlp["hlo_instructions"]
    # optimizer.step() is no backward; loss.backward() itself made only a few ops
    step = lines[line_of(MODELS / "trained_stack.py", "optimizer.step()")]
    assert step["backward_hlo_instructions"] == 0
    # The text shows each line's backward share; no row is a library's line.
    text = trained.result.stdout
    table = text[text.index("Where your graphs come from") :]
    mlp_row = next(row for row in table.splitlines() if row.startswith(mlp_location(mlp)))
    share = mlp["backward_hlo_instructions"] / mlp["hlo_instructions"]
    assert f"{share:.0%}" in mlp_row.split()
    assert "backward" in table.splitlines()[1]
    assert "site-packages" not in json.dumps(cost["lines"])


def mlp_location(line: dict) -> str:
    return str(_portable(line["location"]))
