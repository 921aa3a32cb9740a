"""The nearest earlier graph is picked by ``ir_distance`` (op counts, shapes),
and only that one is compared in full (issue 23: a storm of N graphs costs N
full comparisons, not N²/2). The cheap distance must equal the full one."""

from __future__ import annotations

import itertools

from tests.conftest import GOLDEN
from xlacli.analysis.recompiles.ir_compare import compare_ir, ir_distance, ir_ops
from xlacli.parse.ir_dump import parse_ir_dump


def _graphs():
    return [
        graph
        for name in ("host_sync", "shape_change")
        for graph in parse_ir_dump((GOLDEN / name / "ir-dump.txt").read_text())
    ]


def test_the_cheap_distance_equals_the_full_comparisons():
    graphs = _graphs()
    assert len(graphs) >= 6
    distances = set()
    for old, new in itertools.permutations(graphs, 2):
        full = compare_ir(old, new).distance
        assert ir_distance(ir_ops(old), ir_ops(new)) == full
        distances.add(full)
    assert {0, 1} <= distances and max(distances) > 1000  # same, shape, ops: all three met
