"""Matching IR nodes by op, shape and location (class 3 of issue 8) and
normalising lazy-tensor artefacts before comparing (class 4), on hand-built IR."""

from pathlib import Path

from xlacli.analysis.recompiles.explain import CompiledGraph, ExplainContext, explain_compiles
from xlacli.analysis.recompiles.ir_compare import compare_ir, normalise
from xlacli.analysis.recompiles.locate import Locator
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.ir_dump import parse_ir_dump

STEP_END = (Frame("sync", "/lib/torch_xla/torch_xla.py", 87), Frame("run", "/xlacli/steps.py", 9))


def graph(*nodes: str, graph_hash: str = "abc"):
    text = (
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (/u/m.py:1)\n\n## BEGIN_GRAPH\nIR {\n"
    )
    text += "".join(f"  {node}\n" for node in nodes)
    text += f"}}\n\nGraph Hash: {graph_hash}\n\n## END_GRAPH\n"
    return parse_ir_dump(text)[0]


def queue(entries: int, graph_hash: str):
    """``bank = torch.cat([x, *queue])`` (line 33), then ``/ 0.1`` (line 34) and
    ``* s`` (line 35): the temperature's scalar comes first in post order."""
    leaves = ["%0 = f32[] xla::device_data(), location=step@m.py:34"]
    leaves.append("%1 = f32[8,16]{1,0} xla::device_data(), location=step@m.py:30")
    for i in range(entries):
        leaves.append(f"%{2 + i} = f32[8,16]{{1,0}} xla::device_data(), location=step@m.py:33")
    k = len(leaves)
    leaves.append(f"%{k} = f32[] xla::device_data(), location=step@m.py:35")
    rows = 8 * (entries + 1)
    cat = ", ".join(f"%{i}" for i in range(1, 2 + entries))
    return graph(
        *leaves,
        f"%{k + 1} = f32[{rows},16]{{1,0}} aten::cat({cat}), location=step@m.py:33",
        f"%{k + 2} = f32[8,{rows}]{{1,0}} aten::mm(%1, %{k + 1}), location=step@m.py:34",
        f"%{k + 3} = f32[8,{rows}]{{1,0}} aten::div(%{k + 2}, %0), location=step@m.py:34",
        f"%{k + 4} = f32[8,{rows}]{{1,0}} aten::mul(%{k + 3}, %{k}), location=step@m.py:35",
        graph_hash=graph_hash,
    )


def test_the_added_node_is_the_tensor_cat_gained_not_a_scalar():
    difference = compare_ir(queue(1, "a"), queue(2, "b"))
    assert difference.kind == "ops"
    assert difference.added == ("xla::device_data",) and difference.removed == ()
    node = difference.new_node
    assert node is not None and node.shape.startswith("f32[8,16]")
    assert node.location is not None and node.location.line == 33
    assert difference.shape_change is None  # the cat grew because of the added operand


def locator() -> Locator:
    located = Locator(
        roots=CodeRoots(("/lib/",), "/xlacli/"), model_dir=Path("/u"), load_hlo=lambda h: None
    )
    located.learn_frames([Frame("step", "/u/m.py", 1)])
    return located


def test_the_explanation_names_the_cat_line():
    graphs = [
        CompiledGraph(i, step, h, 0.1, STEP_END, False, queue(n, h), ("input 0 f32[8,32]",))
        for i, (step, h, n) in enumerate([(0, "a", 1), (3, "b", 2)])
    ]
    _, event = explain_compiles(graphs, ExplainContext(2, locator()))
    assert event.cause.category == "graph_structure"
    assert event.cause.location == "/u/m.py:33"
    assert event.cause.detail == "1 op added: xla::device_data (new: xla::device_data f32[8,16])"


WEIGHT = "%0 = f32[8,16]{1,0} xla::device_data(), location=forward@linear.py:134"
X = "%1 = f32[4,16]{1,0} xla::device_data(), location=to_device@steps.py:76"


def masked(count: int, *, fresh_transpose: bool, graph_hash: str):
    """A linear layer's forward and the weight's transpose in backward, then a
    mask count. At step 0 torch_xla reuses the forward's transpose of the
    weight; later steps build it afresh (the duplicate ``%6``)."""
    backward = (
        [
            "%6 = f32[16,8]{0,1} aten::permute(%0), location=forward@linear.py:134",
            "%7 = f32[8,16]{1,0} aten::permute(%6)",
        ]
        if fresh_transpose
        else ["%7 = f32[8,16]{1,0} aten::permute(%2)"]
    )
    return graph(
        WEIGHT,
        X,
        "%2 = f32[16,8]{0,1} aten::permute(%0), location=forward@linear.py:134",
        "%3 = f32[4,8]{1,0} aten::mm(%1, %2), location=forward@linear.py:134",
        f"%4 = s64[{count},1]{{1,0}} xla::device_data(), location=step@m.py:40",
        f"%5 = f32[{count},8]{{1,0}} aten::index(%3, %4), location=step@m.py:40",
        *backward,
        f"%8 = f32[{count}]{{0}} aten::sum(%5), location=step@m.py:41",
        graph_hash=graph_hash,
    )


def test_a_rebuilt_transpose_is_folded_into_the_shared_one():
    nodes = normalise(masked(32, fresh_transpose=True, graph_hash="b").nodes)
    assert [n.op for n in nodes].count("aten::permute") == 2
    assert next(n for n in nodes if n.id == 7).operands == ("%2",)


def test_step_zero_artefact_does_not_hide_a_data_dependent_shape():
    old = masked(32, fresh_transpose=False, graph_hash="a")
    new = masked(30, fresh_transpose=True, graph_hash="b")
    difference = compare_ir(old, new)
    assert difference.kind == "shape"  # not "1 op added: aten::permute"
    assert difference.new_node is not None and difference.new_node.shape.startswith("s64[30,1]")
    graphs = [
        CompiledGraph(0, 0, "a", 0.1, STEP_END, False, old, (), frozenset({"aten::nonzero"})),
        CompiledGraph(1, 1, "b", 0.1, STEP_END, False, new, (), frozenset({"aten::nonzero"})),
    ]
    _, event = explain_compiles(graphs, ExplainContext(2, locator()))
    assert event.cause.category == "data_dependent_shape"
    assert "s64[32,1] -> s64[30,1]" in event.cause.detail


def test_a_shape_change_beside_added_ops_comes_first_with_the_ops_as_also():
    old = masked(32, fresh_transpose=False, graph_hash="a")
    extra = "%9 = f32[30]{0} aten::tanh(%8), location=step@m.py:42"
    new = graph(
        *masked(30, fresh_transpose=False, graph_hash="b").ir_text.splitlines()[1:-1],
        extra,
        graph_hash="b",
    )
    difference = compare_ir(old, new)
    assert difference.kind == "ops" and difference.added == ("aten::tanh",)
    assert difference.shape_change is not None
    graphs = [
        CompiledGraph(0, 0, "a", 0.1, STEP_END, False, old, (), frozenset({"aten::nonzero"})),
        CompiledGraph(1, 3, "b", 0.1, STEP_END, False, new, (), frozenset({"aten::nonzero"})),
    ]
    _, event = explain_compiles(graphs, ExplainContext(2, locator()))
    assert event.cause.category == "data_dependent_shape"
    assert event.cause.location == "/u/m.py:40"
    assert [(a.category, a.location, a.detail) for a in event.cause.also] == [
        ("graph_structure", "/u/m.py:42", "1 op added: aten::tanh (new: aten::tanh f32[30])")
    ]


def test_a_graph_that_differs_only_by_a_rebuilt_node_is_an_artefact():
    old = masked(32, fresh_transpose=False, graph_hash="a")
    new = masked(32, fresh_transpose=True, graph_hash="b")
    difference = compare_ir(old, new)
    assert difference.kind == "none"
    assert [node.id for node in difference.folded] == [6]
    graphs = [
        CompiledGraph(0, 0, "a", 0.1, STEP_END, False, old, ()),
        CompiledGraph(1, 1, "b", 0.1, STEP_END, False, new, ()),
    ]
    _, event = explain_compiles(graphs, ExplainContext(0, locator()))
    assert event.cause.category == "lazy_artefact"
    assert event.cause.hint is None and not event.steady_state  # expected, even after warm-up
