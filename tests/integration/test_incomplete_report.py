"""A bug in one analysis costs its section, never the report (exit 5).

The compile runs for real (the model in its child process); the report is
assembled in this process, where one processor is replaced by one that raises.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES
from xlacli.assemble import pipeline
from xlacli.assemble.processors import PROCESSORS, Processor
from xlacli.cli.main import main
from xlacli.errors import EXIT_INCOMPLETE

pytestmark = pytest.mark.e2e


def _broken_events(run: Any, done: Any) -> Any:
    raise ValueError("tuple.index(x): x not in tuple")


@pytest.fixture(scope="module")
def incomplete_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("incomplete") / "run"
    patch = pytest.MonkeyPatch()
    broken = tuple(
        Processor(p.section, _broken_events, p.empty) if p.section == "events" else p
        for p in PROCESSORS
    )
    patch.setattr(pipeline, "PROCESSORS", broken)
    try:
        code = main(
            [
                "compile",
                str(EXAMPLES / "dynamic_shapes.py"),
                "--steps",
                "3",
                "--out",
                str(out),
                "--html",
            ]
        )
    finally:
        patch.undo()
    return {"code": code, "out": out}


def test_exit_code_says_incomplete(incomplete_run: dict[str, Any]) -> None:
    assert incomplete_run["code"] == EXIT_INCOMPLETE == 5


def test_report_is_written_with_the_problem_listed(incomplete_run: dict[str, Any]) -> None:
    report = json.loads((incomplete_run["out"] / "report.json").read_text())
    assert report["problems"] == [
        {
            "processor": "events",
            "exception": "ValueError",
            "message": "tuple.index(x): x not in tuple",
            "where": report["problems"][0]["where"],
        }
    ]
    raise_line = _broken_events.__code__.co_firstlineno + 1
    assert report["problems"][0]["where"].endswith(f"test_incomplete_report.py:{raise_line}")
    # The failed section is empty; every other section is there.
    assert report["events"] == []
    assert report["compilations"] == 2 and len(report["graphs"]) == 2  # steps 0 and 2
    assert all(graph["memory"] is not None for graph in report["graphs"])


def test_every_view_says_so_in_one_line(incomplete_run: dict[str, Any]) -> None:
    out: Path = incomplete_run["out"]
    html = (out / "report.html").read_text()
    assert "the events analysis failed (ValueError: tuple.index(x): x not in tuple)" in html
    assert "incomplete report · exit 5" in html
    from tests.conftest import run_cli

    text = run_cli("report", out)
    assert text.code == 0, text.stderr
    lines = [line for line in text.stdout.splitlines() if "analysis failed" in line]
    assert len(lines) == 1 and "please report it" in lines[0], text.stdout
