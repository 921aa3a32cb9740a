"""Golden text reports of the examples at 80 and 120 columns (issue 27).

The saved reports (tests/assets/golden/text_reports/NAME.json) are rendered again
and compared with NAME.WIDTH.txt; regenerate both with
``python tests/assets/golden/text_reports/make_goldens.py`` (``--render`` to keep the
reports and re-render). Each text is also checked against its own JSON
(tests/report_statements.py), for line ends and for locations kept whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.assets.golden.text_reports.make_goldens import HERE, REPO, REPO_TOKEN, WIDTHS, render
from tests.report_statements import contradictions, wrapped_locations

SAVED = sorted(HERE.glob("*.json"))
CASES = [(path, width) for path in SAVED for width in WIDTHS]


def _ids() -> list[str]:
    return [f"{path.stem}-{width}" for path, width in CASES]


@pytest.mark.parametrize(("saved", "width"), CASES, ids=_ids())
def test_the_text_report_matches_its_golden(saved: Path, width: int):
    golden = saved.with_name(f"{saved.stem}.{width}.txt")
    assert render(saved.read_text(), width) == golden.read_text(), (
        f"{golden.name} differs: regenerate with "
        "python tests/assets/golden/text_reports/make_goldens.py --render and review the diff"
    )


@pytest.mark.parametrize(("saved", "width"), CASES, ids=_ids())
def test_the_text_report_keeps_lines_and_locations_whole(saved: Path, width: int):
    text = saved.with_name(f"{saved.stem}.{width}.txt").read_text()
    assert not [line for line in text.splitlines() if line != line.rstrip()]
    data = json.loads(saved.read_text().replace(REPO_TOKEN, str(REPO)))
    assert wrapped_locations(text, data) == []
    # Every line fits, but for the commands (printed whole, to be copied).
    too_wide = [
        line
        for line in text.splitlines()
        if len(line) > width and not line.startswith(("Next: ", "Run folder: "))
    ]
    assert too_wide == []


@pytest.mark.parametrize("saved", SAVED, ids=[path.stem for path in SAVED])
def test_no_statement_of_the_text_contradicts_its_json(saved: Path):
    data = json.loads(saved.read_text().replace(REPO_TOKEN, str(REPO)))
    text = render(saved.read_text(), 120)
    assert text.splitlines()[0]  # the verdict opens the report
    assert contradictions(text, data) == []


def test_the_examples_have_goldens():
    assert len(SAVED) >= 5
