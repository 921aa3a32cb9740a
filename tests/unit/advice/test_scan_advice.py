"""Block detection on hand-built graphs: identical layers, one differing layer, nesting."""

from __future__ import annotations

import pytest

from tests.unit.advice.graphs import CALL_LINE, MODEL, block_ops, inputs, outside_ops
from xlacli.analysis.scan_advice import MIN_SHARE, advise_scan
from xlacli.analysis.scan_cost import GraphSize, scan_cost
from xlacli.parse.frames import Frame
from xlacli.parse.hlo_stacks import StackedOp


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


def test_silent_on_a_small_share_and_on_calls_outside_loops() -> None:
    small = [op for _ in range(2) for op in block_ops()] + outside_ops(200)
    assert MIN_SHARE > 12 / 212
    assert advise_scan(inputs(small)) == ()
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
