"""The zoo's cheapest cases, as CI runs them (the full sweep runs outside CI:
python benchmarks/zoo/run.py; its table is docs/zoo.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.zoo.run import Row, _xlacli_locations, run_one, table

PACKAGE_FILE = str(Path(__file__).resolve().parents[2] / "xlacli" / "child" / "transfers.py")


@pytest.mark.e2e
@pytest.mark.parametrize(("case", "mode"), [("bert", "training"), ("train_eval", "script")])
def test_cheap_zoo_cases_pass(case, mode, tmp_path):
    pytest.importorskip("transformers")
    row = run_one(case, mode, steps=3, timeout=600, work=tmp_path)
    assert row.verdict == "pass", row
    assert row.compiles == row.bare_compiles and row.compiles


def test_a_location_inside_xlacli_fails_the_verdict():
    report = {
        "graphs": [{"frames": [f"to ({PACKAGE_FILE}:38)"], "site": "/u/train.py:3"}],
        "events": [{"cause": {"location": "/u/train.py:3", "library_location": None}}],
        "memory": {"biggest": [{"source": f"{PACKAGE_FILE}:38"}]},
    }
    assert _xlacli_locations(report) == [f"{PACKAGE_FILE}:38"]  # frames are not locations


def test_the_table_has_one_row_per_run():
    rows = [Row("bert", "transformers", "training", 4, 4, 12.3, "pass")]
    assert table(rows).splitlines()[2] == "| bert | transformers | training | 4 | 4 | 12 s | pass |"
