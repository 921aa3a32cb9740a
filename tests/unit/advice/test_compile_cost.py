"""Compile cost by source line, and the value-read ranking, on hand-built graphs."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.advice.graphs import MODEL, ROOTS, block_ops, graph, inputs, outside_ops
from xlacli.analysis.advice_inputs import AdviceInputs, GraphArtifacts
from xlacli.analysis.compile_cost import compile_cost
from xlacli.analysis.value_reads import FIXES, rank_value_reads, read_kind
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrNode
from xlacli.report.advice import compile_cost_from_dict
from xlacli.report.run import StepRecord


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
