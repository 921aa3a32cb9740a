"""Advised, or why not and from how many layers: the verdict on a priced stack."""

from __future__ import annotations

from xlacli.analysis.advice.scan_cost import GraphSize, scan_cost
from xlacli.analysis.advice.scan_verdict import MIN_SHARE, enough_from_layers, judge_stack


def test_enough_layers_for_the_share() -> None:
    # 2 layers make 10% of the graph: each 5%, the rest 90%; n layers make
    # 5n / (90 + 5n) >= 30% from n = 7.7, so 8
    assert enough_from_layers(2, 0.1) == 8
    assert 8 * 0.05 / (0.9 + 8 * 0.05) >= MIN_SHARE > 7 * 0.05 / (0.9 + 7 * 0.05)
    assert enough_from_layers(4, 0.9) == 2
    assert enough_from_layers(4, 0.0) == 0


def test_a_stack_that_pays_and_is_large_enough_is_advised() -> None:
    cost = scan_cost(GraphSize(6.0, fresh=324, repeated=63 * 296), layers=64)
    verdict = judge_stack(64, 0.9, cost)
    assert verdict.advised and verdict.because == ()


def test_reasons_and_the_depth_from_which_it_pays() -> None:
    shallow = scan_cost(GraphSize(2.03, fresh=254, repeated=7 * 238), layers=8)
    verdict = judge_stack(8, 0.9, shallow)
    assert verdict.because == ("loop",)
    assert verdict.advised_from_layers == shallow.pays_from_layers() > 8
    # a small share: both reasons, and the later of the two depths
    small = judge_stack(8, 0.05, shallow)
    assert small.because == ("share", "loop")
    assert small.advised_from_layers == max(enough_from_layers(8, 0.05), shallow.pays_from_layers())


def test_a_saving_within_the_noise_is_said_so() -> None:
    cost = scan_cost(GraphSize(3.6, fresh=254, repeated=22 * 238), layers=23)
    assert cost.saving_s > 0
    assert judge_stack(23, 0.9, cost).because == ("noise",)


def test_a_trained_scan_whose_updates_outweigh_the_saving_pays_at_no_depth() -> None:
    """decoder_stack.py trained with AdamW at 8 layers (390 update instructions a
    layer): each scanned layer's update compiled afresh costs more than the 0.75 of
    a layer scanning saves."""
    graph = GraphSize(6.84, fresh=880, repeated=6565)
    cost = scan_cost(graph, 8, layer_repeated=3444, update_per_layer=390)
    verdict = judge_stack(8, 0.5, cost)
    assert verdict.because == ("sliced_update",)
    assert verdict.advised_from_layers == 0


def test_a_small_update_a_layer_delays_the_depth_from_which_it_pays() -> None:
    graph = GraphSize(6.84, fresh=880, repeated=6565)
    untrained = scan_cost(graph, 8, layer_repeated=3444)
    trained = scan_cost(graph, 8, layer_repeated=3444, update_per_layer=10)
    assert 0 < trained.sliced_update_s < 0.75 * trained.per_layer_s
    assert judge_stack(8, 0.5, trained).because == ("loop",)
    assert trained.pays_from_layers() > untrained.pays_from_layers() > 8
