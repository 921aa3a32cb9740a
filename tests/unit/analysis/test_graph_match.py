"""Graphs paired with the baseline's by what they are (issue 34): one added graph
is one change, a moved line is the same line."""

from __future__ import annotations

import dataclasses

from tests.unit.analysis.test_check import baseline
from xlacli.analysis.check.baseline_pairing import pair_graphs, renamed_baseline
from xlacli.analysis.check.checks import OK, REGRESSION, compare
from xlacli.analysis.check.graph_match import GraphSite
from xlacli.analysis.check.line_growth import line_changes

SYNC = "torch_xla.sync()"


def _sites(*graphs: tuple[str, str, str, int]) -> tuple[dict[str, int], dict[str, GraphSite]]:
    """(key, function, line text, instructions) in the run's order."""
    sizes, sites = {}, {}
    for order, (key, function, text, size) in enumerate(graphs):
        trigger = "host_sync" if ".item()" in text or text.startswith("if ") else "user_sync"
        sizes[key] = size
        sites[key] = GraphSite("train.py", function, text, trigger, order)
    return sizes, sites


FIVE = (
    ("train.py main: sync", "main", SYNC, 324),
    ("train.py main: sync #2", "main", SYNC, 293),
    ("train.py main: sync #3", "main", SYNC, 338),
    ("train.py evaluate: sync", "evaluate", SYNC, 61),
    ("train.py evaluate: sync #2", "evaluate", SYNC, 61),
)


def _baseline(*graphs):
    sizes, sites = _sites(*graphs)
    return baseline(
        compilations=len(sizes), distinct_graphs=len(sizes), graphs=sizes, graph_sites=sites
    )


def _checked(old, new):
    pairing = pair_graphs(old, new)
    return pairing, compare(old, renamed_baseline(new, pairing))


def test_one_graph_added_before_the_others_is_one_new_graph():
    old = _baseline(*FIVE)
    # The run names its graphs in its own order: every key after the new one shifted.
    new = _baseline(
        ("train.py main: sync", "main", "norm = model.weight.norm().item()", 12),
        ("train.py main: sync #2", "main", SYNC, 324),
        ("train.py main: sync #3", "main", SYNC, 293),
        ("train.py main: sync #4", "main", SYNC, 338),
        ("train.py evaluate: sync", "evaluate", SYNC, 61),
        ("train.py evaluate: sync #2", "evaluate", SYNC, 61),
    )
    pairing, outcome = _checked(old, new)
    graph_rows = [r for r in outcome.results if r.name.startswith("HLO instructions")]
    changed = [r for r in graph_rows if r.status != OK]
    assert len(changed) == 1 and changed[0].detail == "new graph", changed
    assert changed[0].status == REGRESSION
    assert pairing.new == (changed[0].name.removeprefix("HLO instructions "),)


def test_an_unchanged_run_pairs_every_graph_with_itself():
    old = _baseline(*FIVE)
    pairing, outcome = _checked(old, _baseline(*FIVE))
    assert pairing.new == () and all(r.status == OK for r in outcome.results)


def test_a_graph_that_grew_is_still_itself():
    old = _baseline(*FIVE)
    grown = list(FIVE)
    grown[3] = ("train.py evaluate: sync", "evaluate", SYNC, 90)
    _, outcome = _checked(old, _baseline(*grown))
    changed = [r for r in outcome.results if r.status != OK]
    assert [r.name for r in changed] == ["HLO instructions train.py evaluate: sync"], changed
    assert changed[0].detail.startswith("61 -> 90")


def test_a_graph_in_another_function_is_not_paired_with_a_gone_one():
    old = _baseline(*FIVE[:3])
    new = _baseline(*FIVE[:2], ("train.py log: sync", "log", "print(loss.item())", 20))
    pairing, outcome = _checked(old, new)
    assert len(pairing.new) == 1
    statuses = {r.name: r.status for r in outcome.results if r.status != OK}
    assert list(statuses.values()).count(REGRESSION) >= 1
    assert any(r.detail == "graph gone" for r in outcome.results)


def test_a_baseline_without_sites_pairs_by_order_as_before():
    old = baseline()  # graphs keyed "m.py:9#0", no sites
    sizes, sites = _sites(("k1", "main", SYNC, 30), ("k2", "main", SYNC, 31))
    sites = {k: dataclasses.replace(s, file="m.py:9") for k, s in sites.items()}
    new = baseline(graphs=sizes, graph_sites=sites)
    pairing, outcome = _checked(old, new)
    assert pairing.renamed == {"k1": "m.py:9#0", "k2": "m.py:9#1"}
    assert all(r.status == OK for r in outcome.results)


def test_lines_that_moved_are_the_same_lines():
    before = {"train.py:27": 132, "train.py:29": 240, "(data)": 284}
    sources = {"train.py:27": "loss = f(model(x), y)", "train.py:29": "opt.step()"}
    after = {"train.py:37": 132, "train.py:39": 240, "(data)": 284}
    moved = {"train.py:37": "loss = f(model(x), y)", "train.py:39": "opt.step()"}
    assert line_changes(before, after, sources, moved) == []
    # Without the texts, a moved line reads as one gone and one new.
    assert line_changes(before, after) != []
    # Equal lines keep their order: the second of two equal lines is itself.
    twice = {"a.py:1": 5, "a.py:2": 7}
    texts = {"a.py:1": "x = f(x)", "a.py:2": "x = f(x)"}
    later = {"a.py:11": 5, "a.py:12": 9}
    later_texts = {"a.py:11": "x = f(x)", "a.py:12": "x = f(x)"}
    [change] = line_changes(twice, later, texts, later_texts)
    assert (change.location, change.before, change.after) == ("a.py:12", 7, 9)
