"""A change inside a library traced to the user's call through the HLO's stacks."""

from pathlib import Path

from xlacli.analysis.recompiles.compiled import CompiledGraph
from xlacli.analysis.recompiles.locate import Locator
from xlacli.hlo.model import Metadata
from xlacli.parse.frames import CodeRoots, Frame, framework_frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.ir_dump import IrGraph, IrNode, parse_ir_dump

ROOTS = CodeRoots(library=("/lib/",), xlacli="/xlacli/")
LINEAR = Frame("forward", "/lib/torch/nn/modules/linear.py", 134)


def compiled(*nodes: str) -> CompiledGraph:
    text = (
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (/u/m.py:1)\n\n## BEGIN_GRAPH\nIR {\n"
    )
    text += "".join(f"  {node}\n" for node in nodes) + "}\n\nGraph Hash: g\n\n## END_GRAPH\n"
    return CompiledGraph(0, 0, "g", 0.1, (), False, parse_ir_dump(text)[0], ())


def locator(stacks: list[StackedOp]) -> Locator:
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None, load_stacks=lambda h: stacks)
    located.learn_frames([LINEAR, Frame("step", "/lib/torch/optim/sgd.py", 1)])
    return located


def test_a_node_in_the_optimizer_is_the_users_step_call():
    graph = compiled("%0 = f32[4]{0} aten::add(), location=_single_tensor_sgd@sgd.py:375")
    sgd = Frame("_single_tensor_sgd", "/lib/torch/optim/sgd.py", 375)
    stacks = [StackedOp("aten__add", (sgd, Frame("train", "/u/train.py", 36)))]
    user, library = locator(stacks).node(graph.ir.nodes[0], graph)
    assert (user, library) == ("/u/train.py:36", "/lib/torch/optim/sgd.py:375")


def test_the_kth_node_at_a_library_line_is_the_kth_call():
    graph = compiled(
        "%0 = f32[4,8]{1,0} aten::addmm(), location=forward@linear.py:134",
        "%1 = f32[4,8]{1,0} aten::addmm(%0), location=forward@linear.py:134",
    )
    encoder = StackedOp("aten__addmm", (LINEAR, Frame("forward", "/u/model.py", 20)))
    decoder = StackedOp("aten__addmm", (LINEAR, Frame("forward", "/u/model.py", 21)))
    located = locator([encoder, encoder, decoder])  # one IR node can lower to several ops
    assert located.node(graph.ir.nodes[0], graph)[0] == "/u/model.py:20"
    assert located.node(graph.ir.nodes[1], graph)[0] == "/u/model.py:21"


def test_without_stacks_the_old_fallbacks_hold():
    graph = compiled("%0 = f32[4]{0} aten::add(), location=_single_tensor_sgd@sgd.py:375")
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None, entry_site="/u/m.py:5")
    located.learn_frames([Frame("step", "/lib/torch/optim/sgd.py", 1)])
    assert located.node(graph.ir.nodes[0], graph) == ("/u/m.py:5", "/lib/torch/optim/sgd.py:375")


def graph_of(graph_hash: str, step: int, *nodes: str) -> CompiledGraph:
    text = (
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (/u/m.py:1)\n\n## BEGIN_GRAPH\nIR {\n"
    )
    text += "".join(f"  {node}\n" for node in nodes)
    text += f"}}\n\nGraph Hash: {graph_hash}\n\n## END_GRAPH\n"
    frames = (Frame("train", "/u/train.py", 40),)
    return CompiledGraph(step, step, graph_hash, 0.1, frames, False, parse_ir_dump(text)[0], ())


def test_a_removed_node_is_located_in_the_old_graph():
    """A difference that only removes a node names a node of the old graph: the
    locator looked it up in the new one and raised (issue 20, item 9)."""
    from xlacli.analysis.recompiles.explain import ExplainContext, explain_compiles

    relu = "%1 = f32[4,8]{1,0} aten::relu(%0), location=forward@linear.py:134"
    data = "%0 = f32[4,8]{1,0} xla::device_data(), location=train@train.py:30"
    add = "%2 = f32[4,8]{1,0} aten::add(%1, %1), location=forward@linear.py:134, ROOT=0"
    old = graph_of("old", 0, data, relu, add)
    new = graph_of("new", 1, data, relu.replace("relu(%0)", "relu(%0), ROOT=0"))
    stacks = [StackedOp("aten__add", (LINEAR, Frame("forward", "/u/model.py", 20)))]
    events = explain_compiles([old, new], ExplainContext(2, locator(stacks)))
    assert events[1].cause.category == "graph_structure"
    assert "removed" in events[1].cause.detail
    assert events[1].cause.location == "/u/model.py:20"  # from the old graph's stacks


# --- the call that led to a read (issue 38) ---

SYNC = Frame("sync", "/lib/torch_xla/torch_xla.py", 87)
RUNPY = Frame("_run_code", "<frozen runpy>", 88)


def test_a_read_in_the_function_that_runs_the_loop_names_no_caller():
    """``main()`` at the script's last line led to every graph, not to this read."""
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None)
    module_call = Frame("<module>", "/u/train.py", 76)
    located.learn_frames([SYNC, Frame("main", "/u/train.py", 60), module_call, RUNPY])
    read = (Frame("main", "/u/train.py", 58), module_call, RUNPY)
    located.learn_frames(read)
    assert located.outer_user_line(read) is None


def test_a_read_in_a_helper_names_the_line_that_called_it():
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None)
    module_call = Frame("<module>", "/u/train.py", 76)
    located.learn_frames([SYNC, Frame("main", "/u/train.py", 60), module_call, RUNPY])
    read = (Frame("evaluate", "/u/train.py", 6), Frame("main", "/u/train.py", 61), module_call)
    located.learn_frames(read)
    assert located.outer_user_line(read) == "/u/train.py:61"


def test_a_helper_called_from_a_loop_at_module_level_is_named():
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None)
    located.learn_frames([SYNC, Frame("<module>", "/u/train.py", 42), RUNPY])
    read = (Frame("log", "/u/train.py", 10), Frame("<module>", "/u/train.py", 40), RUNPY)
    located.learn_frames(read)
    assert located.outer_user_line(read) == "/u/train.py:40"


def test_a_step_closures_read_run_by_a_sync_still_names_the_line_it_ran_at():
    """A closure's read runs inside torch_xla's sync: that sync is not the
    closure's own, so the line whose sync ran it is still named."""
    located = Locator(ROOTS, Path("/u"), load_hlo=lambda h: None)
    compiled_call = Frame("main", "/u/train.py", 48)
    located.learn_frames([SYNC, compiled_call, RUNPY])
    read = (Frame("check_loss", "/u/train.py", 22), SYNC, compiled_call, RUNPY)
    located.learn_frames(read)
    assert located.outer_user_line(read) == "/u/train.py:48"


def test_a_deprecated_sync_is_no_framework_site():
    """``xm.mark_step()`` goes through typing_extensions' ``@deprecated`` wrapper:
    the user called torch_xla, not a framework (the newcomer pass of issue 38 saw
    ``train.py:39 (inside typing_extensions.py:3140)``)."""
    site = "/venv/lib/python3.11/site-packages"
    roots = CodeRoots(library=("/venv/lib/",), xlacli="/xlacli/")
    frames = (
        Frame("sync", f"{site}/torch_xla/torch_xla.py", 87),
        Frame("mark_step", f"{site}/torch_xla/core/xla_model.py", 1032),
        Frame("wrapper", f"{site}/typing_extensions.py", 3140),
        Frame("main", "/u/train.py", 39),
    )
    assert framework_frame(frames, roots) is None
    located = Locator(roots, Path("/u"), load_hlo=lambda h: None)
    assert located.trigger(frames) == ("/u/train.py:39", None)
    # A framework the user called stays its site (transformers' training loop).
    loop = Frame("_inner_training_loop", f"{site}/transformers/trainer.py", 2400)
    called = (frames[0], loop, Frame("train", f"{site}/transformers/trainer.py", 2100), frames[3])
    assert framework_frame(called, roots) == loop


def test_many_library_lines_of_a_large_graph_are_each_traced_without_rescanning_it():
    # Each lookup scanned the whole graph and its stacks (issue 40): the 4,000 lookups
    # below over 20,000 nodes and 20,000 ops were ~10^8 steps; now one pass per graph.
    layers = 10_000
    nodes, stacks = [], []
    for layer in range(layers):
        for line in (134, 135):
            location = Frame("forward", "linear.py", line)
            nodes.append(IrNode(len(nodes), "f32[4,8]{1,0}", "aten::addmm", (), location, "", None))
            library = Frame("forward", "/lib/torch/nn/modules/linear.py", line)
            stacks.append(StackedOp("aten__addmm", (library, Frame("forward", "/u/m.py", layer))))
    graph = CompiledGraph(
        0, 0, "g", 0.1, (), False, IrGraph("S", (), (), "g", "", tuple(nodes)), ()
    )
    located = locator(stacks)
    for layer in range(0, layers, 5):
        assert located.node(graph.ir.nodes[2 * layer + 1], graph)[0] == f"/u/m.py:{layer}"
        metadata = Metadata("aten__addmm", "", "/lib/torch/nn/modules/linear.py", 134)
        assert located.metadata(metadata, graph)[0] == "/u/m.py:0"  # the line's first node
