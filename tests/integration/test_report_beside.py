"""The report's analyses split between two processes give the report one process
gives (issue 40): a real run's folder, assembled both ways."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, run_cli
from xlacli.assemble.beside import can_run_beside
from xlacli.assemble.graph_files import HloCache
from xlacli.assemble.organise import organise_run
from xlacli.assemble.pipeline import run_processors
from xlacli.assemble.processors import PROCESSORS
from xlacli.assemble.read import read_raw_run
from xlacli.parse.frames import current_code_roots
from xlacli.report.run_report import Problem
from xlacli.run_folder.events import read_events
from xlacli.run_folder.request import CaptureRequest, RunPaths

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not can_run_beside(), reason="no fork or one core"),
]


def _sections(run_dir: Path, beside: bool) -> tuple[dict[str, Any], tuple[Problem, ...]]:
    paths = RunPaths(run_dir)
    request = CaptureRequest.load(paths.request)
    raw = read_raw_run(paths, read_events(paths.events))
    run = organise_run(
        raw, paths, request, warmup=2, roots=current_code_roots(), hlo=HloCache(paths.root)
    )
    return run_processors(run, PROCESSORS, beside=beside)


def test_a_training_run_with_recompiles_reports_the_same_from_two_processes(
    tmp_path: Path,
) -> None:
    run = tmp_path / "run"
    result = run_cli(
        "compile", EXAMPLES / "dynamic_shapes.py", "--steps", "4", "--train", "--out", run
    )
    assert result.code == 0, result.stderr
    serial_sections, serial_problems = _sections(run, beside=False)
    sections, problems = _sections(run, beside=True)
    assert not serial_problems and problems == serial_problems
    assert list(sections) == list(serial_sections)
    for name in serial_sections:
        assert sections[name] == serial_sections[name], name
    memory = sections["memory"]
    assert memory.graphs and sections["compile_cost"] is not None
