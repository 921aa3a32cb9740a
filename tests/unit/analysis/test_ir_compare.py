from xlacli.analysis.ir_compare import compare_ir
from xlacli.parse.ir_dump import parse_ir_dump


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
