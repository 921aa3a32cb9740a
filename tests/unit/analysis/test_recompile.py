from pathlib import Path

from xlacli.analysis.recompiles.explain import CompiledGraph, ExplainContext, explain_compiles
from xlacli.analysis.recompiles.locate import Locator
from xlacli.parse.frames import CodeRoots, Frame
from xlacli.parse.ir_dump import parse_ir_dump

ROOTS = CodeRoots(library=("/lib/",), xlacli="/xlacli/")
STEP_END = (Frame("sync", "/lib/torch_xla/torch_xla.py", 87), Frame("run", "/xlacli/steps.py", 9))
VALUE_READ = (Frame("forward", "/u/model.py", 14), Frame("run", "/xlacli/steps.py", 9))


def ir(batch: int):
    text = (
        "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  f (/u/model.py:1)\n\n## BEGIN_GRAPH\n"
        f"IR {{\n  %0 = f32[{batch},8]{{1,0}} xla::device_data(), location=to_device@steps.py:76,"
        f" xla_shape=f32[{batch},8]{{1,0}}\n"
        f"  %1 = f32[{batch},8]{{1,0}} aten::relu(%0), location=forward@model.py:12,"
        f" xla_shape=f32[{batch},8]{{1,0}}, ROOT=0\n}}\n\nGraph Hash: h{batch}\n\n## END_GRAPH\n"
    )
    return parse_ir_dump(text)[0]


def compiled(index, step, graph_hash, frames, batch, value_read=False):
    return CompiledGraph(
        index=index,
        step=step,
        graph_hash=graph_hash,
        compile_time_s=0.1,
        frames=frames,
        value_read=value_read,
        ir=ir(batch),
        input_signature=(f"input 0 f32[{batch},8]",),
    )


def explain(graphs, warmup=2):
    locator = Locator(
        roots=ROOTS,
        model_dir=Path("/u"),
        load_hlo=lambda h: None,
        entry_site="/u/model.py:11",
        inputs_site="/u/model.py:20",
    )
    return explain_compiles(graphs, ExplainContext(warmup, locator))


def test_first_compile_then_input_shape_in_steady_state():
    first, second = explain([compiled(0, 0, "a", STEP_END, 4), compiled(1, 3, "b", STEP_END, 6)])
    assert (first.cause.category, first.steady_state) == ("first_compile", False)
    assert first.cause.location == "/u/model.py:11"  # the step's own code
    assert (second.cause.category, second.steady_state) == ("input_shape", True)
    assert second.cause.detail == "input 0 shape f32[4,8] -> f32[6,8]"
    assert second.cause.location == "/u/model.py:20"
    assert second.compared_with == "a" and second.cause.hint


def test_a_value_read_site_is_a_host_sync():
    (event,) = explain([compiled(0, 0, "a", VALUE_READ, 4, value_read=True)])
    assert event.cause.category == "host_sync"
    assert event.cause.location == "/u/model.py:14"


def test_sites_are_compared_only_with_themselves():
    events = explain([compiled(0, 0, "a", STEP_END, 4), compiled(1, 0, "b", VALUE_READ, 6)])
    assert [e.cause.category for e in events] == ["first_compile", "first_compile"]


def test_no_difference_found_is_unknown_not_a_guess():
    same_ir = compiled(1, 3, "b", STEP_END, 4)
    _, event = explain([compiled(0, 0, "a", STEP_END, 4), same_ir])
    assert event.cause.category == "unknown"
    assert "HLO of one graph is missing" in event.cause.detail


def test_a_storm_of_shapes_costs_about_n_times_recent_distances(monkeypatch):
    """Each new batch size its own input signature (a new sequence length every
    step): the older graphs are one kind, so each new graph is measured against
    the latest 32 and a couple more, not against every earlier one."""
    from xlacli.analysis.recompiles import explain as recompile

    calls = []
    real = recompile.ir_distance
    monkeypatch.setattr(recompile, "ir_distance", lambda a, b: calls.append(1) or real(a, b))
    graphs = [compiled(i, i, f"h{i}", STEP_END, 4 + i) for i in range(120)]
    events = explain(graphs)
    assert all(e.cause.category == "input_shape" for e in events[1:])
    assert len(calls) <= 120 * (recompile.RECENT_CANDIDATES + 2)  # all pairs: 7,140


def test_a_shape_seen_long_ago_is_compared_with_its_own_graph():
    """Back to the first batch size after 40 others: compared with that graph
    (the same inputs), though it is older than the latest 32."""
    graphs = [compiled(i, i, f"h{i}", STEP_END, 4 + i) for i in range(41)]
    graphs.append(compiled(41, 41, "again", STEP_END, 4))
    assert explain(graphs)[-1].compared_with == "h0"
