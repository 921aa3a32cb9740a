"""One contract for every view (render/view.py): text and JSON from the same view,
through the one switch; html for a view without a page is its text (the command
writes the run's page apart)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.assets.golden.text_reports.make_goldens import HERE, REPO, REPO_TOKEN
from xlacli.render.compile_report import CompileReportView, SavedRunView
from xlacli.render.view import Page, render
from xlacli.report.run_report import dump_report, report_from_dict

SAVED = sorted(HERE.glob("*.json"))[:3]


def _report(saved: Path):
    return report_from_dict(json.loads(saved.read_text().replace(REPO_TOKEN, str(REPO))))


@pytest.mark.parametrize("saved", SAVED, ids=lambda p: p.stem)
def test_a_view_renders_its_report_as_json_and_text(saved: Path) -> None:
    report = _report(saved)
    view = CompileReportView(report)
    assert render(view, "json") == dump_report(report)
    text = render(view, "text", width=120)
    assert text.splitlines()[0]  # the verdict opens the report
    assert not [line for line in text.splitlines() if line != line.rstrip()]
    assert render(view, "html", width=120) == text  # no page: --format html prints the text
    assert not isinstance(view, Page)


@pytest.mark.parametrize("saved", SAVED, ids=lambda p: p.stem)
def test_a_saved_run_without_a_profile_is_its_compile_report(saved: Path) -> None:
    report = _report(saved)
    assert render(SavedRunView(report), "text", width=80) == render(
        CompileReportView(report), "text", width=80
    )
    assert json.loads(render(SavedRunView(report), "json")) == json.loads(dump_report(report))
