"""Compile cost by line across runs: ``check``'s baseline and ``diff-hlo RUN RUN``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tests.unit.advice.graphs import report
from tests.unit.analysis.test_check import baseline
from xlacli.analysis.check.baseline import _from_dict, baseline_from_report, dump_baseline
from xlacli.analysis.check.checks import REGRESSION, compare
from xlacli.analysis.check.line_growth import DATA_LINE, grown_summary, line_changes
from xlacli.report.advice import CompileCost, LineCost


def _line(location: str | None, count: int) -> LineCost:
    return LineCost(location, 0, count, 0, 0.0, 0.0)


def test_changes_sorted_by_growth_with_new_and_gone_lines() -> None:
    changes = line_changes({"a:1": 10, "b:2": 5, "c:3": 7}, {"a:1": 30, "b:2": 5, "d:4": 4})
    assert [(c.location, c.growth) for c in changes] == [("a:1", 20), ("d:4", 4), ("c:3", -7)]
    assert grown_summary(changes) == "a:1 (+20), d:4 new (+4)"


def test_baseline_records_lines_machine_independently(tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    library = "/venv/lib/python3.11/site-packages/torch/nn/modules/linear.py"
    cost = CompileCost(
        9, 1.0, (_line(f"{model}:12", 5), _line(f"{library}:134", 3), _line(None, 1))
    )
    run = dataclasses.replace(report(), model=str(model), compile_cost=cost)
    recorded = baseline_from_report(run, tmp_path / "baseline.json", "sgd")
    assert recorded.lines == {"model.py:12": 5, "torch/nn/modules/linear.py:134": 3, DATA_LINE: 1}
    import json

    reloaded = _from_dict(json.loads(dump_baseline(recorded)), tmp_path / "baseline.json")
    assert reloaded.lines == recorded.lines


def test_a_graph_that_grew_names_the_lines_that_grew() -> None:
    before = baseline(lines={"m.py:12": 20, "m.py:13": 10})
    after = baseline(graphs={"m.py:9#0": 60, "m.py:9#1": 31}, lines={"m.py:12": 50, "m.py:13": 10})
    (grown,) = [r for r in compare(before, after).results if r.status == REGRESSION]
    assert grown.name == "HLO instructions m.py:9#0"
    assert grown.detail == "30 -> 60; lines grew: m.py:12 (+30)"


def test_old_baselines_without_lines_compare_as_before() -> None:
    outcome = compare(baseline(), baseline(graphs={"m.py:9#0": 60, "m.py:9#1": 31}))
    assert [r.detail for r in outcome.regressions] == ["30 -> 60"]
