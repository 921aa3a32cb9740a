"""The walk from an op's library line to the user's line (issue 27, item 4)."""

from __future__ import annotations

from tests.unit.parse.test_hlo_stacks import hlo_proto
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.stack_walk import LineWalk, Walked, line_walk, text_walk

ROOTS = CodeRoots(("/lib/",), "/xlacli/")
LINEAR = Frame("forward", "/lib/torch/nn/modules/linear.py", 134)
SGD = "/lib/torch/optim/sgd.py:375"


def _op(name: str, *user: Frame) -> StackedOp:
    harness = Frame("run", "/xlacli/child/steps.py", 9)
    return StackedOp("aten__mm", (LINEAR, *user, harness), name=name)


def test_each_op_by_its_name_and_a_library_line_reached_from_one_user_line():
    walk = line_walk(
        [
            _op("dot.1", Frame("forward", "/me/model.py", 12)),
            _op("dot.2", Frame("f", "/me/model.py", 13)),
        ],
        ROOTS,
    )
    # Two user lines reach linear.py:134: each op by its own name, the line alone by none.
    assert walk.walk(LINEAR.location, "dot.1") == Walked("/me/model.py:12", LINEAR.location)
    assert walk.walk(LINEAR.location, "dot.2") == Walked("/me/model.py:13", LINEAR.location)
    assert walk.walk(LINEAR.location, "fusion.7") is None
    alone = line_walk([_op("dot.1", Frame("forward", "/me/model.py", 12))], ROOTS)
    assert alone.walk(LINEAR.location, "fusion.7") == Walked("/me/model.py:12", LINEAR.location)


def test_the_users_own_line_and_the_harness_alone_are_not_walked():
    own = StackedOp("aten__add", (Frame("forward", "/me/model.py", 20),), name="add.1")
    harness = _op("copy.1")  # xlacli moving the weights: no user frame at all
    walk = line_walk([own, harness], ROOTS)
    assert walk.walk("/me/model.py:20", "add.1") is None
    assert walk.walk(LINEAR.location, "copy.1") is None
    assert not walk.walk(None)


def test_another_stage_adds_library_lines_where_both_agree():
    one = LineWalk({}, {LINEAR.location: "/me/model.py:12", SGD: "/me/train.py:8"})
    other = LineWalk(
        {"x.1": Walked("/me/a.py:1", "/lib/b.py:2")},
        {"/lib/b.py:2": "/me/a.py:1", SGD: "/me/train.py:9"},
    )
    merged = one.with_libraries_of(other)
    assert merged.by_name == {}  # the other stage's names are another module's
    assert merged.by_library == {LINEAR.location: "/me/model.py:12", "/lib/b.py:2": "/me/a.py:1"}


def test_the_protobuf_beside_an_hlo_text_file(tmp_path):
    graph = tmp_path / "graphs" / "abc"
    graph.mkdir(parents=True)
    (graph / "hlo.after.txt").write_text("HloModule m\n")
    (graph / "hlo.before.pb").write_bytes(hlo_proto())  # the other stage: library lines
    walked = text_walk(graph / "hlo.after.txt", ROOTS).walk(SGD, "fusion.3")
    assert walked == Walked("/u/train.py:8", SGD)
    dumped = tmp_path / "module_0004.SyncTensorsGraph.5.before_optimizations.txt"
    dumped.write_text("HloModule m\n")
    dumped.with_name(dumped.name.removesuffix(".txt") + ".hlo.pb").write_bytes(hlo_proto())
    assert text_walk(dumped, ROOTS).walk(SGD, "add.3") == Walked("/u/train.py:8", SGD)
    loose = tmp_path / "a.txt"
    loose.write_text("HloModule m\n")
    assert not text_walk(loose, ROOTS)
