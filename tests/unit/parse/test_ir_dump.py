from tests.conftest import GOLDEN
from xlacli.parse.ir_dump import parse_ir_dump, parse_ir_node


def test_one_block_per_sync_with_hashes_and_frames():
    graphs = parse_ir_dump((GOLDEN / "shape_change" / "ir-dump.txt").read_text())
    assert len(graphs) == 4  # one per step, cached or not
    assert [g.kind for g in graphs] == ["ScheduleSyncTensorsGraph"] * 4
    hashes = [g.graph_hash for g in graphs]
    assert hashes[0] == hashes[1] == hashes[3] != hashes[2]
    assert graphs[0].frames[0].function == "sync"
    assert graphs[0].frames[0].file.endswith("torch_xla/torch_xla.py")
    assert all(len(h) >= 30 for g in graphs for h in g.root_hashes)


def test_nodes_carry_shape_op_operands_location_and_root():
    graph = parse_ir_dump((GOLDEN / "shape_change" / "ir-dump.txt").read_text())[2]
    ops = [node.op for node in graph.nodes]
    assert ops.count("aten::addmm") == 2 and "aten::relu" in ops
    inputs = [n for n in graph.nodes if n.is_device_data and n.shape.startswith("f32[6,16]")]
    assert len(inputs) == 1  # the batch of 6 rows
    root = [n for n in graph.nodes if n.root_index is not None]
    assert len(root) == 1 and root[0].op == "aten::addmm"
    assert root[0].location is not None and root[0].location.file == "linear.py"
    assert graph.ir_text.startswith("IR {") and graph.ir_text.endswith("}")


def test_node_line_with_tuple_shape_and_attributes():
    node = parse_ir_node(
        "  %19 = (f32[4,2]{1,0}, s64[4,2]{1,0}) aten::topk(%9), num_outputs=2, "
        "location=<module>@k.py:10, xla_shape=(f32[4,2]{1,0}, s64[4,2]{1,0}), ROOT=7"
    )
    assert node is not None
    assert node.shape == "(f32[4,2]{1,0}, s64[4,2]{1,0})"
    assert node.op == "aten::topk" and node.operands == ("%9",)
    assert node.attributes == "num_outputs=2"
    assert node.location is not None and (node.location.function, node.location.line) == (
        "<module>",
        10,
    )
    assert node.root_index == 7


def test_truncated_file_keeps_complete_nodes():
    text = (GOLDEN / "shape_change" / "ir-dump.txt").read_text()
    cut = text[: text.index("aten::relu") + 5]
    graphs = parse_ir_dump(cut)
    assert len(graphs) == 1
    assert graphs[0].graph_hash is None
    assert graphs[0].nodes  # the nodes written before the cut


def test_empty_text():
    assert parse_ir_dump("") == []


XLACLI_BLOCK = """[ScheduleSyncTensorsGraph]
TensorsGraphInfo:
  sync (/site-packages/torch_xla/torch_xla.py:95)
  run (/work/model.py:12)

Compile Index: 3

## BEGIN_GRAPH
IR {
  %0 = f32[4]{0} xla::device_data(), location=convert@module.py:1357, xla_shape=f32[4]{0}
  %1 = f32[4]{0} aten::relu(%0), location=forward@model.py:9, xla_shape=f32[4]{0}, ROOT=0
}

## END_GRAPH

"""


def test_xlacli_block_names_its_compile_not_a_hash():
    (graph,) = parse_ir_dump(XLACLI_BLOCK)
    assert graph.compile_index == 3
    assert graph.graph_hash is None
    assert [node.op for node in graph.nodes] == ["xla::device_data", "aten::relu"]
    assert graph.roots == 1
    assert graph.frames[1].function == "run"


def test_a_cached_graph_synced_again_is_parsed_once():
    # A script's every sync is dumped: a 50-layer decoder's 5 steps were 5 blocks
    # of 20k nodes for 2 distinct graphs (issue 40), equal but for a few scopes.
    text = (GOLDEN / "host_sync" / "ir-dump.txt").read_text()
    graphs = parse_ir_dump(text + text)
    half = len(graphs) // 2
    assert [g.nodes for g in graphs[:half]] == [g.nodes for g in graphs[half:]]
    for a, b in zip(graphs[:half], graphs[half:], strict=True):
        assert all(x is y for x, y in zip(a.nodes, b.nodes, strict=True))
