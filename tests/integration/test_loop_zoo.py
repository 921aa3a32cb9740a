"""A handful of the loop zoo's rows (benchmarks/loops/, issue 36), each judged as the
zoo judges it: counts equal a bare run's, every cause agrees with the structural
diff, no first graph called steady-state, steps are the training iterations, every
cause at a line of the script. The whole zoo runs outside CI (docs/loops.md)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.loops.run import run_row
from benchmarks.loops.template import ROWS
from tests.conftest import run_cli
from tests.recorded_cli import run_bare

pytestmark = pytest.mark.e2e

IN_CI = (
    "base",
    "driver=eager",
    "accumulate=2,optimizer=adafactor",
    "driver=loader,evaluation=unsynced",
    "driver=compiled,batches=short_last",
)
BY_NAME = {row.name: row for row in ROWS}


def replayed_xlacli(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """The row's xlacli run through the suite's recordings (tests/recorded_cli.py)."""
    result = run_cli(*argv, cwd=cwd, timeout=timeout)
    return subprocess.CompletedProcess(argv, result.code, result.stdout, result.stderr)


def replayed_bare(argv: list[str], cwd: Path, timeout: float, output: Path) -> int:
    return run_bare(argv, cwd=cwd, output=output, timeout=timeout).returncode


@pytest.mark.parametrize("name", IN_CI)
def test_a_loop_zoo_row_passes(name, tmp_path):
    result = run_row(
        BY_NAME[name], tmp_path, timeout=600, xlacli=replayed_xlacli, bare_run=replayed_bare
    )
    assert result.verdict == "pass", result
