"""Memory peaks and buffers at the user's line, the library's beside it (issue 27)."""

from __future__ import annotations

from xlacli.analysis.memory.user_lines import graph_walk, memory_at_user_lines
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.memory import BufferRecord, GraphMemory

ROOTS = CodeRoots(("/venv/lib/",), "/xlacli/")
LINEAR = Frame("forward", "/venv/lib/torch/nn/modules/linear.py", 134)


def _op(name: str, *user: Frame) -> StackedOp:
    return StackedOp(
        "aten__mm", (LINEAR, *user, Frame("run", "/xlacli/child/steps.py", 9)), name=name
    )


def _memory(*buffers: BufferRecord) -> GraphMemory:
    return GraphMemory(100, 10, "dot.1", LINEAR.location, 200, buffers)


def _buffer(name: str) -> BufferRecord:
    return BufferRecord(f"{name}{{}}", 10, "f32[2]", "temporary", "aten__mm", LINEAR.location)


def test_a_library_line_reached_from_one_user_line_is_walked():
    walk = graph_walk(None, [_op("dot.9", Frame("forward", "/me/model.py", 12))], ROOTS)
    moved = memory_at_user_lines(_memory(_buffer("dot.1")), walk)
    assert (moved.peak_site, moved.peak_library_site) == ("/me/model.py:12", LINEAR.location)
    assert moved.biggest[0].source == "/me/model.py:12"
    assert moved.biggest[0].library_source == LINEAR.location


def test_buffers_of_one_library_line_at_each_ones_user_line():
    """Three layers' linear.py:134: the optimized module's stacks name each buffer's layer."""
    optimized = [_op(f"dot.{n}", Frame("forward", "/me/model.py", 10 + n)) for n in (1, 2, 3)]
    moved = memory_at_user_lines(
        _memory(*map(_buffer, ("dot.1", "dot.3"))), graph_walk(optimized, None, ROOTS)
    )
    assert [b.source for b in moved.biggest] == ["/me/model.py:11", "/me/model.py:13"]
    assert moved.peak_site == "/me/model.py:11"


def test_a_line_reached_from_several_user_lines_or_none_stays():
    ops = [
        _op("a.1", Frame("f", "/me/model.py", 12)),
        _op("a.2", Frame("f", "/me/model.py", 13)),
        _op("a.3"),
    ]
    memory = _memory(_buffer("dot.1"))
    assert memory_at_user_lines(memory, graph_walk(None, ops, ROOTS)) == memory


def test_an_op_of_the_autograd_engine_is_at_the_backward_line():
    """No Python frame of its own: the step's loss.backward() made it."""
    backward_op = BufferRecord("broadcast.3{}", 10, "f32[2]", "temporary", "aten__expand", None)
    argument = BufferRecord("copy.1{}", 10, "f32[2]", "argument", "", None)
    memory = _memory(backward_op, argument)
    moved = memory_at_user_lines(memory, graph_walk(None, None, ROOTS), "/me/train.py:50")
    assert [b.source for b in moved.biggest] == ["/me/train.py:50", None]
