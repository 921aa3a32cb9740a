"""Block detection on hand-built graphs: identical layers, one differing layer, nesting."""

from __future__ import annotations

import pytest

from tests.unit.advice.graphs import CALL_LINE, MODEL, block_ops, inputs, outside_ops, update_ops
from xlacli.analysis.advice.scan import MIN_SHARE, advise_scan
from xlacli.analysis.advice.scan_cost import GraphSize, scan_cost
from xlacli.parse.frames import Frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.advice import ScanAdvice


def test_identical_layers_are_advised_with_their_list_class_and_saving() -> None:
    ops = [op for _ in range(200) for op in block_ops()] + outside_ops(4)
    (advice,) = advise_scan(inputs(ops, compile_time_s=2.0))
    assert advice.identical
    assert advice.layers == 200
    assert advice.call_site == f"{MODEL}:{CALL_LINE}"
    assert advice.module_list == "self.layers"
    assert advice.layer_class == "Block"
    assert advice.block_instructions == 1200
    assert advice.share == pytest.approx(1200 / 1204)
    # computations only (each layer's data op left out): 9 fresh (the first layer's
    # 5, the 4 outside), 199 x 5 repeated
    cost = scan_cost(GraphSize(2.0, fresh=9, repeated=995), 200)
    assert advice.pays
    assert advice.predicted_compile_time_s == pytest.approx(cost.scanned_s)
    assert advice.predicted_saving_time_s == pytest.approx(2.0 - cost.scanned_s)
    assert advice.loop_compile_time_s == pytest.approx(cost.loop_s)
    assert "scan_layers(self.layers, hidden)" in advice.code
    assert f"{MODEL}:6" in advice.lines


def test_a_shallow_stack_is_found_but_not_advised() -> None:
    ops = [op for _ in range(8) for op in block_ops()] + outside_ops(4)
    (advice,) = advise_scan(inputs(ops, compile_time_s=2.0))
    assert advice.identical and advice.layers == 8
    assert not advice.pays
    assert advice.predicted_saving_time_s < 0
    assert advice.code == ""
    assert advice.break_even_layers > 8


def test_one_differing_layer_is_reported_not_advised() -> None:
    wider = block_ops(shape="11[2,16]")  # one layer of another width
    ops = [op for _ in range(7) for op in block_ops()] + wider + outside_ops(2)
    (advice,) = advise_scan(inputs(ops))
    assert not advice.identical
    assert advice.layers == 7
    assert advice.predicted_saving_time_s == 0
    assert advice.code == ""
    assert any("aten::relu" in item for item in advice.differing)
    assert "not identical" in advice.blockers[0]


def test_extra_op_in_one_layer_breaks_identity() -> None:
    dropout = StackedOp("aten__bernoulli", (Frame("forward", MODEL, 7),), "11[2,8]")
    layers = [block_ops() for _ in range(5)]
    layers[2] = block_ops(extra=(StackedOp("aten__bernoulli", block_ops()[4].stack, "11[2,8]"),))
    ops = [op for layer in layers for op in layer] + [dropout]
    (advice,) = advise_scan(inputs(ops))
    assert not advice.identical
    assert advice.differing == (f"aten::bernoulli at {MODEL}:7 (1x)",)


def test_nested_module_calls_give_one_advice_for_the_outer_loop() -> None:
    ops = [op for _ in range(4) for op in block_ops()]
    (advice,) = advise_scan(inputs(ops))
    assert advice.call_site.endswith(f":{CALL_LINE}")  # not the attn call inside the block


def test_a_small_share_is_found_not_advised_with_why_and_from_how_many_layers() -> None:
    """Issue 37: identical layers under the share the advisor needs are reported, with
    the reasons and the depth from which the same layers would be advised."""
    small = [op for _ in range(2) for op in block_ops()] + outside_ops(200)
    assert MIN_SHARE > 12 / 212
    (advice,) = advise_scan(inputs(small))
    assert advice.identical and advice.layers == 2
    assert not advice.pays and advice.code == ""
    assert advice.not_advised_because == ("share", "loop")
    assert advice.optimizer_instructions == 0
    # From how many layers: the same per-layer cost and share, extrapolated.
    depth = advice.advised_from_layers
    assert depth > 2
    deeper = [op for _ in range(depth) for op in block_ops()] + outside_ops(200)
    (advised,) = advise_scan(inputs(deeper, compile_time_s=_compile_at(advice, depth)))
    assert advised.pays, advised.not_advised_because
    shallower = [op for _ in range(depth - 1) for op in block_ops()] + outside_ops(200)
    (not_yet,) = advise_scan(inputs(shallower, compile_time_s=_compile_at(advice, depth - 1)))
    assert not not_yet.pays


def _compile_at(advice: ScanAdvice, layers: int) -> float:
    """The graph's compile with ``layers`` of the advice's layers, as the model has it."""
    return advice.first_layer_compile_time_s + (layers - 1) * advice.per_layer_compile_time_s


def test_silent_on_layers_that_differ_in_a_small_share_and_on_calls_outside_loops() -> None:
    wider = block_ops(shape="11[2,16]")
    small = [*block_ops(), *block_ops(), *wider, *outside_ops(200)]
    assert advise_scan(inputs(small)) == ()
    (differ,) = advise_scan(inputs([*block_ops(), *block_ops(), *wider, *outside_ops(2)]))
    assert not differ.identical and differ.not_advised_because == ("layers_differ",)
    assert advise_scan(inputs(outside_ops(10))) == ()


def test_silent_when_the_source_cannot_be_read() -> None:
    ops = [op for _ in range(8) for op in block_ops()]
    unreadable = inputs(ops)
    unreadable = type(unreadable)(unreadable.graphs, unreadable.roots)
    assert advise_scan(unreadable) == ()


def test_a_loop_over_data_is_no_stack_of_layers() -> None:
    """Issue 37: an evaluation loop that never syncs calls the model once per batch;
    its iterations are batches, not layers (the call does not call the loop's target)."""
    import dataclasses

    source = "\n".join(
        [*[""] * (CALL_LINE - 2), "for batch in loader:", "    out = self.model(batch)", ""]
    )
    ops = [op for _ in range(8) for op in block_ops()] + outside_ops(4)
    run = dataclasses.replace(inputs(ops), read_source={MODEL: source}.get)
    assert advise_scan(run) == ()


def test_the_layers_backward_counts_with_their_forward() -> None:
    """Issue 37: in a training graph the layers' backward (no stack; its IR scope
    names the forward line) is as much the layers' as their forward."""
    scope = f"xlacli_backward_of@{MODEL}@7/"
    backward = [
        StackedOp("aten__threshold_backward", (), "11[2,8]", "", scope + "aten__tb"),
        StackedOp("aten__mm", (), "11[2,8]", "", scope + "aten__mm"),
    ]
    layer = [*block_ops(), *backward]
    ops = [op for _ in range(8) for op in layer] + outside_ops(40)
    (advice,) = advise_scan(inputs(ops, compile_time_s=2.0))
    assert advice.identical and advice.layers == 8
    assert advice.block_instructions == 8 * 8
    assert advice.share == pytest.approx(64 / 104)
    # without the backward, the layers are their forward alone
    forward_only = [op for _ in range(8) for op in block_ops()] + outside_ops(40)
    (plain,) = advise_scan(inputs(forward_only, compile_time_s=2.0))
    assert plain.block_instructions == 48


def _trained_layer() -> list[StackedOp]:
    scope = f"xlacli_backward_of@{MODEL}@7/"
    backward = [
        StackedOp("aten__threshold_backward", (), "11[2,8]", "", scope + "aten__tb"),
        StackedOp("aten__mm", (), "11[2,8]", "", scope + "aten__mm"),
    ]
    return [*block_ops(), *backward]


def test_a_trained_stacks_optimizer_update_is_shown_apart_and_priced() -> None:
    """Issue 37: the optimizer's update of every layer's parameters is no layer's
    (scanning keeps it), but scanned, each layer's update compiles afresh: with a
    large update a layer, scanning pays at no depth, and the advice says why."""
    layers = 64
    ops = [op for _ in range(layers) for op in _trained_layer()]
    ops += outside_ops(4) + update_ops(3 * layers + 2)  # 3 a layer, 2 outside
    (advice,) = advise_scan(inputs(ops, compile_time_s=4.0))
    assert advice.layers == layers and advice.identical
    assert advice.block_instructions == layers * 8  # forward and backward, no update
    assert advice.optimizer_instructions == 5 * (3 * layers + 2)
    assert advice.optimizer_share == pytest.approx(advice.optimizer_instructions / len(ops))
    # each layer's 3 updates (12 computations) compiled afresh outweigh the 7 it saves
    assert advice.sliced_update_compile_time_s > 0.75 * advice.per_layer_compile_time_s
    assert advice.not_advised_because == ("sliced_update",)
    assert advice.advised_from_layers == 0
    assert not advice.pays and advice.code == ""
    # without the update, the same layers pay: the update was the reason
    untrained = [op for _ in range(layers) for op in _trained_layer()] + outside_ops(4)
    (plain,) = advise_scan(inputs(untrained, compile_time_s=4.0))
    assert plain.pays and plain.sliced_update_compile_time_s == 0


def test_the_optimizers_repeated_updates_are_repeated_content() -> None:
    """Updates of parameters of one shape are copies to XLA: they are not the
    graph's fresh content, which sets the first layer's cost and the loop's."""
    from xlacli.analysis.advice.optimizer_update import optimizer_update
    from xlacli.analysis.advice.scan_pricing import graph_size

    ops = [op for _ in range(8) for op in _trained_layer()] + update_ops(8 * 3)
    run = inputs(ops)
    (artifacts,) = run.graphs
    layers = [(advise_scan(run)[0], 8 * 7)]  # 7 computations a layer
    size = graph_size(artifacts, layers, optimizer_update(ops))
    # computed: 8 x 7 layer ops and 24 x 4 updates; repeated: 7 layers, 92 updates
    assert size.repeated == 7 * 7 + (24 * 4 - 4)
    assert size.fresh == 8 * 7 + 24 * 4 - size.repeated
