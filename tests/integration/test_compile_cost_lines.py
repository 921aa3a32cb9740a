"""Every row of "Where your graphs come from", in every example's report, is a line
of the user's code or a named bucket, never a library's line (issue 37, item 3).

It reads the captures the golden report tests make (the same commands through
``capture_once``): no capture of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.integration.test_report_golden import COMMANDS
from xlacli.analysis.advice.compile_cost import BACKWARD_PASS, LIBRARY_ONLY
from xlacli.analysis.profile.op_lines import OPTIMIZER_STEP

NAMED = {None, BACKWARD_PASS, LIBRARY_ONLY, OPTIMIZER_STEP}


def not_users(location: str | None) -> bool:
    """A library's line: outside the checkout, or inside its virtual environment."""
    if location in NAMED:
        return False
    path = Path(str(location).rpartition(":")[0])
    path = path if path.is_absolute() else REPO / path
    return not path.is_relative_to(REPO) or "site-packages" in path.parts


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_compile_cost_row_is_a_user_line_or_a_named_bucket(name: str, capture_once) -> None:
    captured = capture_once("compile", *COMMANDS[name])
    cost = captured.report.get("compile_cost")
    if not cost:
        pytest.skip("no compile cost (no graph kept its stacks)")
    rows = [*cost["lines"], *(line for graph in cost["graphs"] for line in graph["lines"])]
    assert [row for row in rows if not_users(row["location"])] == []
    # A library line only ever stands beside a user line.
    for row in rows:
        if row.get("library_location"):
            assert row["location"] not in (None, OPTIMIZER_STEP), row
