import functools

from xlacli.analysis.recompiles.ir_compare import compare_ir
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrGraph, IrNode, parse_ir_dump


def graph(*nodes: str):
    text = (
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (/u/m.py:1)\n\n## BEGIN_GRAPH\nIR {\n"
    )
    text += "".join(f"  {node}\n" for node in nodes) + "}\n\nGraph Hash: abc\n\n## END_GRAPH\n"
    return parse_ir_dump(text)[0]


X = "%0 = f32[4,8]{1,0} xla::device_data(), location=to_device@steps.py:76, xla_shape=f32[4,8]{1,0}"
SLICE4 = "%1 = f32[4,4]{1,0} xla::select(%0), location=step@m.py:9, xla_shape=f32[4,4]{1,0}"
SLICE6 = "%1 = f32[4,6]{1,0} xla::select(%0), location=step@m.py:9, xla_shape=f32[4,6]{1,0}"
RELU4 = "%2 = f32[4,4]{1,0} aten::relu(%1), location=step@m.py:10, xla_shape=f32[4,4]{1,0}"
RELU6 = "%2 = f32[4,6]{1,0} aten::relu(%1), location=step@m.py:10, xla_shape=f32[4,6]{1,0}"
TANH = "%3 = f32[4,4]{1,0} aten::tanh(%2), location=step@m.py:11, xla_shape=f32[4,4]{1,0}"


def test_same_graph():
    assert compare_ir(graph(X, SLICE4, RELU4), graph(X, SLICE4, RELU4)).kind == "none"


def test_shape_change_is_found_where_it_was_born():
    difference = compare_ir(graph(X, SLICE4, RELU4), graph(X, SLICE6, RELU6))
    assert difference.kind == "shape"
    assert difference.new_node is not None and difference.new_node.op == "xla::select"
    assert difference.new_node.location is not None and difference.new_node.location.line == 9


def test_ops_added():
    difference = compare_ir(graph(X, SLICE4, RELU4), graph(X, SLICE4, RELU4, TANH))
    assert difference.kind == "ops"
    assert difference.added == ("aten::tanh",) and difference.removed == ()
    assert difference.new_node is not None and difference.new_node.op == "aten::tanh"
    assert difference.distance > compare_ir(graph(X, SLICE4), graph(X, SLICE6)).distance


@functools.cache
def _stack(layers: int, *, extra_at: int | None = None, wide_at: int | None = None) -> IrGraph:
    """A graph of ``layers`` identical layers of 5 ops (data, mm, relu, mul,
    sum: 100k nodes for 20k layers), each op at its own line; ``extra_at``
    adds a tanh after that layer's relu, ``wide_at`` widens that layer's data."""
    nodes = [IrNode(0, "f32[4,8]{1,0}", "xla::device_data", (), None, "", None)]
    lines = {op: Frame("step", "m.py", line) for line, op in enumerate((*LAYER_OPS, "aten::tanh"))}
    for layer in range(layers):
        width = 9 if layer == wide_at else 8
        ops = (*LAYER_OPS[:3], "aten::tanh", *LAYER_OPS[3:]) if layer == extra_at else LAYER_OPS
        for op in ops:
            operands = (f"%{len(nodes) - 1}",) if op != "xla::device_data" else ()
            shape = f"f32[4,{width}]{{1,0}}" if op != "aten::sum" else "f32[4,8]{1,0}"
            nodes.append(IrNode(len(nodes), shape, op, operands, lines[op], "", None))
    return IrGraph("ScheduleSyncTensorsGraph", (), (), None, "", tuple(nodes))


LAYER_OPS = ("xla::device_data", "aten::mm", "aten::relu", "aten::mul", "aten::sum")


def test_an_op_added_to_one_layer_of_100k_nodes_is_found_there():
    # difflib took minutes on two graphs of 65k ops (issue 40); quadratic
    # matching of 100k nodes would not finish in this test's lifetime.
    old, new = _stack(20_000), _stack(20_000, extra_at=12_345)
    difference = compare_ir(old, new)
    assert difference.kind == "ops" and difference.added == ("aten::tanh",)
    assert difference.new_node is not None and difference.new_node.id == 1 + 5 * 12_345 + 3
    assert difference.shape_change is None


def test_a_shape_born_in_one_layer_of_100k_nodes_beside_an_added_op_is_found():
    old = _stack(20_000)
    new = _stack(20_000, extra_at=3, wide_at=15_000)
    difference = compare_ir(old, new)
    assert difference.kind == "ops" and difference.shape_change is not None
    before, after = difference.shape_change
    # Layer 15,000's data: after the first node, 15,000 layers of 5 and the added tanh.
    assert (before.op, after.id) == ("xla::device_data", 1 + 5 * 15_000 + 1)
    assert after.shape.startswith("f32[4,9]")
