"""Compile cost by source line, and the value-read ranking, on hand-built graphs."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.advice.graphs import (
    LINEAR,
    MODEL,
    PLUMBING,
    ROOTS,
    block_ops,
    call,
    graph,
    inputs,
    outside_ops,
)
from xlacli.analysis.advice.compile_cost import compile_cost
from xlacli.analysis.advice.inputs import AdviceInputs, GraphArtifacts
from xlacli.analysis.advice.value_reads import FIXES, rank_value_reads, read_kind
from xlacli.analysis.profile.op_lines import OPTIMIZER_STEP
from xlacli.parse.frames import Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.ir_dump import IrNode
from xlacli.report.advice import compile_cost_from_dict
from xlacli.report.run_report import StepRecord


def test_instructions_and_compile_time_by_user_line() -> None:
    ops = block_ops() + outside_ops(4)
    cost = compile_cost(inputs(ops, compile_time_s=1.0))
    assert cost is not None
    by_line = {line.location: line for line in cost.lines}
    assert by_line[f"{MODEL}:11"].hlo_instructions == 4
    assert by_line[f"{MODEL}:11"].share == pytest.approx(4 / 10)
    assert by_line[f"{MODEL}:11"].compile_time_s == pytest.approx(0.4)
    assert by_line[f"{MODEL}:6"].hlo_instructions == 2  # the linear (library) and the add
    assert by_line[None].hlo_instructions == 1  # device data is no line's work
    assert cost.lines[0].location == f"{MODEL}:11"  # biggest first
    assert sum(line.compile_time_s for line in cost.lines) == pytest.approx(1.0)


def test_ir_nodes_follow_the_stacks_of_their_innermost_frame() -> None:
    base = inputs(block_ops())
    node = IrNode(1, "f32[2,8]", "aten::addmm", (), Frame("forward", "linear.py", 134), "", None)
    artifacts = dataclasses.replace(base.graphs[0], ir_nodes=(node,))
    cost = compile_cost(dataclasses.replace(base, graphs=(artifacts,)))
    assert cost is not None
    assert {line.location: line.ir_nodes for line in cost.lines}[f"{MODEL}:6"] == 1


def test_summed_over_graphs_and_round_trips_through_json() -> None:
    base = inputs(outside_ops(3))
    second = dataclasses.replace(base.graphs[0], graph=graph("g2", 1.0))
    cost = compile_cost(dataclasses.replace(base, graphs=(base.graphs[0], second)))
    assert cost is not None
    assert cost.hlo_instructions == 6
    assert cost.lines[0].hlo_instructions == 6
    assert len(cost.graphs) == 2
    assert compile_cost_from_dict(dataclasses.asdict(cost)) == cost


def test_no_stacks_no_section() -> None:
    assert compile_cost(AdviceInputs((), ROOTS)) is None


@pytest.mark.parametrize(
    ("source", "kind"),
    [
        ("print(f'loss {loss}')", "print"),
        ("HISTORY.append(loss.item())", "item"),
        ("if loss > 1.0:", "bool"),
        ("values = logits.cpu()", "to_host"),
    ],
)
def test_read_kinds(source: str, kind: str) -> None:
    assert read_kind(source) == kind


def test_value_reads_ranked_by_cost_per_step() -> None:
    cheap = dataclasses.replace(
        graph("a"), trigger="host_sync", site=f"{MODEL}:13", executions=2, execute_time_s=0.001
    )
    dear = dataclasses.replace(
        graph("b"), trigger="host_sync", site=f"{MODEL}:14", executions=4, execute_time_s=0.002
    )
    steps = tuple(StepRecord(step, 0.01, 0, 1, ()) for step in range(4))
    graphs = tuple(GraphArtifacts(g) for g in (cheap, dear, graph("c")))
    run = AdviceInputs(graphs, ROOTS, step_records=steps, read_source={MODEL: "x\n" * 20}.get)
    first, second = rank_value_reads(run)
    assert first.location == f"{MODEL}:14"
    assert first.extra_time_s == pytest.approx(4 * 0.002 / 4)  # 4 steps in the report
    assert first.executions_per_step == 1.0
    assert second.extra_time_s == pytest.approx(2 * 0.001 / 4)
    assert first.fix == FIXES[first.kind]


def _training_inputs(ops: list[StackedOp], backward_line: str | None = None) -> AdviceInputs:
    base = inputs(ops)
    record = dataclasses.replace(base.graphs[0].graph, site=f"{MODEL}:20")
    artifacts = dataclasses.replace(base.graphs[0], graph=record)
    lines = {0: backward_line} if backward_line else {}
    return dataclasses.replace(base, graphs=(artifacts,), backward_lines=lines)


def test_backward_ops_count_for_the_forward_line_they_differentiate() -> None:
    """The autograd engine's ops have no Python stack: their IR scope names the
    forward line (child/backward_sites.py), and the line shows its backward share."""
    scope = f"xlacli_backward_of@{MODEL}@7.3/"
    node = IrNode(9, "f32[2,8]", "aten::threshold_backward", (), None, "", None, scope[:-1])
    ops = [
        *block_ops(),
        StackedOp("aten__threshold_backward", (), "11[2,8]", "select.9", scope + "aten__tb"),
        # a decomposition run in the backward: library frames, and the scope
        StackedOp("aten__expand", (Frame("select_backward", "/lib/python3.11/d.py", 840),),
                  "11[2,8]", "broadcast.10", scope + "aten__expand"),
        # a gradient summed over two uses: made outside every node
        StackedOp("aten__add", (), "11[2,8]", "add.11", "aten__add"),
        StackedOp("prim__Constant", (), "11[]", "constant.12", "prim__Constant"),
    ]  # fmt: skip
    base = _training_inputs(ops, f"{MODEL}:30")
    artifacts = dataclasses.replace(base.graphs[0], ir_nodes=(node,))
    cost = compile_cost(dataclasses.replace(base, graphs=(artifacts,)))
    assert cost is not None
    by_line = {line.location: line for line in cost.lines}
    relu = by_line[f"{MODEL}:7"]
    assert (relu.hlo_instructions, relu.backward_hlo_instructions, relu.ir_nodes) == (3, 2, 1)
    assert by_line[f"{MODEL}:30"].backward_hlo_instructions == 1  # loss.backward()
    assert by_line[None].hlo_instructions == 2  # the parameter and the constant
    assert by_line[None].backward_hlo_instructions == 0


def test_a_graph_that_did_not_train_keeps_frameless_ops_as_data() -> None:
    ops = [*block_ops(), StackedOp("aten__add", (), "11[2,8]", "add.11", "aten__add")]
    cost = compile_cost(_training_inputs(ops))
    assert cost is not None
    assert {line.location: line.hlo_instructions for line in cost.lines}[None] == 2


def test_a_helper_computation_counts_for_the_op_that_calls_it() -> None:
    ops = [
        StackedOp("aten__sum", call(Frame("forward", MODEL, 7)), "11[2]", "reduce.3", "aten__sum"),
        StackedOp("", (), "11[]", "add.1", "", caller="reduce.3"),
        StackedOp("", (), "11[]", "x.2", "", caller="reduce.3"),
    ]
    cost = compile_cost(_training_inputs(ops))
    assert cost is not None
    assert [(line.location, line.hlo_instructions) for line in cost.lines] == [(f"{MODEL}:7", 3)]


def test_library_only_ops_are_the_graph_site_with_the_library_line_beside() -> None:
    """No row is a library's line: an op with no frame of the user's (a model made of
    torch's modules, run by xlacli's loop) is the graph's site, the library beside;
    the optimizer step of xlacli's loop is a named row."""
    xlacli = Frame("run_step", "/xlacli/child/steps.py", 40)
    linear = (Frame("forward", LINEAR, 134), *PLUMBING[::-1], xlacli)
    adam = (Frame("adam", "/lib/python3.11/site-packages/torch/optim/adam.py", 447), xlacli)
    ops = [
        StackedOp("aten__addmm", linear, "11[2,8]", "dot.1"),
        StackedOp("aten__addmm", linear, "11[2,8]", "dot.2"),
        StackedOp("aten__mul", adam, "11[2,8]", "multiply.3"),
    ]
    cost = compile_cost(_training_inputs(ops))
    assert cost is not None
    first, second = cost.lines
    assert (first.location, first.library_location) == (f"{MODEL}:20", f"{LINEAR}:134")
    assert (second.location, second.library_location) == (OPTIMIZER_STEP, None)
    assert compile_cost_from_dict(dataclasses.asdict(cost)) == cost


def test_reads_that_forced_no_graph_are_ranked_from_the_childs_timings() -> None:
    """Eager mode, or a library's ``.tolist()`` of a value a sync computed: no
    ``host_sync`` graph, yet each read waits for the device and copies (issue 37)."""
    from xlacli.analysis.advice.value_reads import UNFORCED_FIX, reads_by_site
    from xlacli.run_folder.step_events import step_event

    steps = tuple(StepRecord(step, 0.01, 0, 1, ()) for step in range(4))
    site = f"{MODEL}:13"
    events = [{"read_counts": [[site, None, 1]], "read_times": [[site, None, 1, 2e6, 2e6, 1e6]]}]
    counts = reads_by_site([step_event(e) for e in events * 4])
    assert counts == {site: 4}
    run = AdviceInputs(
        (GraphArtifacts(graph("c")),),
        ROOTS,
        step_records=steps,
        read_source={MODEL: "x\n" * 12 + "history.append(loss.item())\n"}.get,
        read_times={site: ((0.002, 0.002, 0.001),) * 4},
        read_counts=counts,
    )
    (cost,) = rank_value_reads(run)
    assert (cost.location, cost.kind, cost.reads_per_step) == (site, "item", 1.0)
    assert cost.executions_per_step == 0
    assert cost.extra_time_s == pytest.approx(0.001)  # the thread's own work taken off
    assert cost.fix == UNFORCED_FIX


def test_a_backward_pass_no_line_of_the_users_called_is_a_named_row() -> None:
    """xlacli's --train loop calls loss.backward() on a model of torch's modules: no
    forward line to scope the backward under, no user line for the call."""
    from xlacli.analysis.advice.compile_cost import BACKWARD_PASS

    ops = [*block_ops(), StackedOp("aten__mm", (), "11[2,8]", "dot.9", "aten__mm")]
    cost = compile_cost(_training_inputs(ops, backward_line=None))
    assert cost is not None
    assert {line.location: line.hlo_instructions for line in cost.lines}[None] == 2
    trained = dataclasses.replace(_training_inputs(ops), backward_lines={0: ""})
    cost = compile_cost(trained)
    assert cost is not None
    rows = {line.location: line for line in cost.lines}
    assert rows[BACKWARD_PASS].backward_hlo_instructions == 1
    assert rows[None].hlo_instructions == 1
