"""Memory peaks and buffers at the user's line, the library's beside it (issue 27)."""

from __future__ import annotations

from xlacli.analysis.user_lines import memory_at_user_lines, user_lines
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.memory import BufferRecord, GraphMemory

ROOTS = CodeRoots(("/venv/lib/",), "/xlacli/")
LINEAR = Frame("forward", "/venv/lib/torch/nn/modules/linear.py", 134)


def _op(*user: Frame) -> StackedOp:
    return StackedOp("aten__mm", (LINEAR, *user, Frame("run", "/xlacli/child/steps.py", 9)))


def test_a_library_line_reached_from_one_user_line_is_walked():
    walked = user_lines([_op(Frame("forward", "/me/model.py", 12))], ROOTS)
    assert walked == {"/venv/lib/torch/nn/modules/linear.py:134": "/me/model.py:12"}
    memory = GraphMemory(
        100,
        10,
        "dot.1",
        LINEAR.location,
        200,
        (BufferRecord("dot.1{}", 10, "f32[2]", "temporary", "aten__mm", LINEAR.location),),
    )
    moved = memory_at_user_lines(memory, walked)
    assert (moved.peak_site, moved.peak_library_site) == ("/me/model.py:12", LINEAR.location)
    assert moved.biggest[0].source == "/me/model.py:12"
    assert moved.biggest[0].library_source == LINEAR.location


def test_a_line_reached_from_several_user_lines_or_none_stays():
    ops = [_op(Frame("f", "/me/model.py", 12)), _op(Frame("f", "/me/model.py", 13)), _op()]
    assert user_lines(ops, ROOTS) == {}
