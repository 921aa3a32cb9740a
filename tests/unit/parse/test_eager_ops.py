"""Eager mode's op graphs put between the debug log's events (parse/eager_ops.py)."""

from __future__ import annotations

from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.eager_ops import EAGER_CAUSE, is_eager, merge_eager_events
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrGraph

LINE = Frame("main", "/p/train.py", 7)


def block(graph_hash: str) -> IrGraph:
    return IrGraph("ScheduleSyncTensorsGraph", (LINE,), (), graph_hash, "", ())


def logged(kind: str, graph_hash: str) -> AnalysisEvent:
    return AnalysisEvent(kind, "torch_xla.compile", graph_hash, 1, 1, (LINE,))


# An eager run: two op graphs, the compiled step, the ops again, the step again.
DUMP = [block(h) for h in ("op1", "op2", "step", "op1", "op2", "step")]


def test_compiles_are_each_hash_first_block_with_logged_ones_in_place():
    merged = merge_eager_events([logged("compile", "step")], DUMP, "compile", counted=3)
    assert merged is not None
    assert [e.graph_hash for e in merged.events] == ["op1", "op2", "step"]
    assert [is_eager(e) for e in merged.events] == [True, True, False]
    assert merged.logged == (2,)
    assert merged.events[0].cause == EAGER_CAUSE and merged.events[0].frames == (LINE,)
    assert merged.aligned([1.5]) == [None, None, 1.5]


def test_executions_are_every_block():
    runs = [logged("execute", "step"), logged("execute", "step")]
    merged = merge_eager_events(runs, DUMP, "execute", counted=6)
    assert merged is not None and merged.logged == (2, 5)
    assert merged.aligned([0.1, 0.2]) == [None, None, 0.1, None, None, 0.2]


def test_nothing_to_add_or_a_dump_that_does_not_add_up_changes_nothing():
    step = [logged("compile", "step")]
    assert merge_eager_events(step, DUMP, "compile", counted=1) is None  # all logged
    assert merge_eager_events(step, DUMP, "compile", counted=5) is None  # dump disagrees
    assert merge_eager_events([logged("compile", "other")], DUMP, "compile", counted=3) is None
