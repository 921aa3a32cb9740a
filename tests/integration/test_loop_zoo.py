"""A handful of the loop zoo's rows (benchmarks/loops/, issue 36), each judged as the
zoo judges it: counts equal a bare run's, every cause agrees with the structural
diff, no first graph called steady-state, steps are the training iterations, every
cause at a line of the script. The whole zoo runs outside CI (docs/loops.md)."""

from __future__ import annotations

import pytest

from benchmarks.loops.run import run_row
from benchmarks.loops.template import ROWS

pytestmark = pytest.mark.e2e

IN_CI = (
    "base",
    "driver=eager",
    "accumulate=2,optimizer=adafactor",
    "driver=loader,evaluation=unsynced",
    "driver=compiled,batches=short_last",
)
BY_NAME = {row.name: row for row in ROWS}


@pytest.mark.parametrize("name", IN_CI)
def test_a_loop_zoo_row_passes(name, tmp_path):
    result = run_row(BY_NAME[name], tmp_path, timeout=600)
    assert result.verdict == "pass", result
