"""The scan cost model: fresh and repeated instructions, the loop's own compile,
and the fresh/repeated ratio fitted from a run's graphs."""

from __future__ import annotations

import pytest

from xlacli.analysis.advice.scan_cost import (
    FRESH_TO_REPEATED,
    SLICED_UPDATE,
    XLA_CPU_BASIS,
    GraphSize,
    fit_fresh_ratio,
    scan_cost,
)


def test_a_shallow_stack_would_not_pay() -> None:
    # decoder_stack.py at 8 layers on XLA:CPU: 254 fresh computations (one layer and
    # what is outside it), 7 x 238 repeated, 2.03 s of compile; scan_layers measured
    # 3.09 s (CPU time), a loss of 1.06 s
    cost = scan_cost(GraphSize(2.03, fresh=254, repeated=7 * 238), layers=8)
    assert -2 * 1.06 < cost.saving_s < -1.06 / 2
    assert cost.scanned_s == pytest.approx(2.03 - cost.saving_s)
    assert not cost.pays
    assert 20 <= cost.break_even_layers <= 36  # measured: between 8 and 32
    assert cost.basis == XLA_CPU_BASIS


def test_a_deep_stack_pays_and_the_parts_add_up() -> None:
    graph = GraphSize(6.0, fresh=324, repeated=63 * 296)
    cost = scan_cost(graph, layers=64)
    assert cost.pays
    assert cost.first_layer_s + 63 * cost.per_layer_s == pytest.approx(graph.compile_time_s)
    # the loop added, three quarters of each further layer saved
    assert cost.saving_s == pytest.approx(0.75 * 63 * cost.per_layer_s - cost.loop_s)
    assert cost.scanned_s == pytest.approx(graph.compile_time_s - cost.saving_s)
    assert cost.break_even_layers < 64


def test_a_saving_within_the_noise_is_not_advised() -> None:
    graph = GraphSize(3.6, fresh=254, repeated=22 * 238)  # 23 layers: just past break-even
    cost = scan_cost(graph, layers=23)
    assert 0 < cost.saving_s < 0.05 * graph.compile_time_s
    assert not cost.pays


def test_the_ratio_is_fitted_from_graphs_with_different_shares() -> None:
    def timed(fresh: int, repeated: int) -> GraphSize:
        return GraphSize(0.001 * (30 * fresh + repeated), fresh, repeated)

    graphs = [timed(100, 0), timed(100, 500), timed(50, 1000)]
    assert fit_fresh_ratio(graphs) == pytest.approx(30)
    cost = scan_cost(graphs[1], layers=6, ratio=30.0, fitted_over=3)
    assert cost.first_layer_s == pytest.approx(0.001 * 30 * 100)
    assert cost.basis == "fresh/repeated cost ratio fitted over 3 graphs"


def test_no_fit_from_one_graph_or_alike_shares_or_nonsense() -> None:
    assert fit_fresh_ratio([GraphSize(2.0, 254, 1666)]) is None
    alike = [GraphSize(1.0, 100, 200), GraphSize(2.0, 200, 400)]
    assert fit_fresh_ratio(alike) is None
    negative = [GraphSize(5.0, 100, 0), GraphSize(1.0, 100, 500)]  # repeats made it cheaper
    assert fit_fresh_ratio(negative) is None
    assert scan_cost(GraphSize(2.0, 254, 1666), 8).basis == XLA_CPU_BASIS
    assert FRESH_TO_REPEATED > 1


def test_the_depth_from_which_it_pays_is_where_the_model_says_it_pays() -> None:
    """``pays_from_layers`` extrapolates the same stack: at that depth the model
    says it pays, one layer fewer it does not (the compile grows with the layers)."""
    shallow = scan_cost(GraphSize(2.03, fresh=254, repeated=7 * 238), layers=8)
    depth = shallow.pays_from_layers()
    scale = 2.03 / (FRESH_TO_REPEATED * 254 + 7 * 238)

    def at(layers: int) -> bool:
        repeated = (layers - 1) * 238
        graph = GraphSize(scale * (FRESH_TO_REPEATED * 254 + repeated), 254, repeated)
        return scan_cost(graph, layers).pays

    assert at(depth) and not at(depth - 1)
    assert shallow.break_even_layers < depth  # saving something is not paying


def test_a_trained_scan_compiles_each_layers_update_afresh() -> None:
    """Scanned, each layer's gradient is a slice of a stacked one, fused into its
    optimizer update at its own offset: SLICED_UPDATE of the update turns fresh."""
    graph = GraphSize(6.84, fresh=880, repeated=6565)  # decoder_stack.py, AdamW, 8 layers
    cost = scan_cost(graph, 8, layer_repeated=3444, update_per_layer=390)
    scale = 6.84 / (FRESH_TO_REPEATED * 880 + 6565)
    assert cost.per_layer_s == pytest.approx(scale * 3444 / 7)  # the layers', not the update's
    assert cost.update_per_layer_s == pytest.approx(scale * 390)
    sliced = scale * (FRESH_TO_REPEATED - 1) * SLICED_UPDATE * 390
    assert cost.sliced_update_s == pytest.approx(sliced)
    assert cost.saving_s == pytest.approx(7 * (0.75 * cost.per_layer_s - sliced) - cost.loop_s)
    assert cost.break_even_layers == cost.pays_from_layers() == 0
    assert not cost.pays


def test_no_fit_from_a_training_steps_first_and_later_graphs() -> None:
    """trained_stack.py's two AdamW steps (the first creates the optimizer's state):
    the shares differ by a few percent, and the compile times' noise would set k."""
    first, later = GraphSize(10.42, 580, 970), GraphSize(9.37, 558, 817)
    assert fit_fresh_ratio([first, later]) is None
