"""What ``scan_layers`` would do to a graph's compile time: a model fed by the
run's own compiles.

Measured on XLA:CPU (``benchmarks/advice/scan.py``, docs/performance.md), a
graph of N identical layers does not cost N times one layer: its fresh content
(the first layer and what lies outside the loop) costs about ``FRESH_TO_REPEATED``
times more per HLO instruction than the repeated layers, which XLA compiles as
copies of content it has seen. So the graph's compile time is

    T(N) = c * (k * U + R)    U: fresh instructions, R: the N-1 repeated layers'

with the run's own compile time giving the scale ``c`` and ``k`` fitted from the
run's graphs when they allow it (graphs with different shares of repeated
layers), else the XLA:CPU figure. Then the first layer's graph costs
``T1 = c * k * U``, each further layer ``m = c * L``, and ``scan_layers`` keeps
``T1`` but replaces the repeated layers by a loop whose body is traced apart
(AOTAutograd's forward, saving what a backward needs) and compiled as content
of its own, ``W = LOOP_TO_FRESH * T1``; the scanned graph still grows with
depth (each layer's weights stacked, its saved activations kept), by
``STACKED_LAYER * m`` a layer. The saving is ``(1 - STACKED_LAYER) (N-1) m - W``:
negative for shallow stacks, where the advisor says scanning would not pay.
Both constants are fitted over two decoders on XLA:CPU (docs/performance.md):
the loop's cost differs between models (1.3x the first layer's graph for
examples/advice/decoder_stack.py, under 0.5x for torch_xla's own
examples/decoder_only_model.py), so a prediction near the break-even depth is
the least certain.

A training step adds the optimizer's per-parameter update, the same ops on
every layer's parameters: repeated content, which scanning keeps. But scanned,
each layer's gradient leaves the loop as a slice of a stacked one, and XLA fuses
that slice, at its own offset, into the layer's update: every layer's update
becomes fresh content (``SLICED_UPDATE`` of its instructions), ``S = c (k - 1)
SLICED_UPDATE P`` more a layer for P update instructions a layer. When ``S``
outweighs what scanning saves a layer, it pays at no depth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Measured on XLA:CPU (torch_xla 2.9), two decoders of 1 to 96 layers: compile
# time against fresh and repeated instructions (24 for both), and the scanned
# graph against the one-layer graph and the repeated layers (fitted over both).
FRESH_TO_REPEATED = 24.0
LOOP_TO_FRESH = 0.6
STACKED_LAYER = 0.25
# Measured on XLA:CPU, examples/advice/decoder_stack.py trained with AdamW at 8, 24
# and 48 layers: the scanned step grows by about 1 s of compile a layer where the
# plain one grows by 0.1 to 0.3 s; one fusion a parameter and layer holds the
# gradient's slice with about half of the update's ops (docs/performance.md).
SLICED_UPDATE = 0.4
# The run's graphs fit k only when their fresh and repeated counts are this far
# from proportional (the sine squared of the angle between them): a training
# step's first and later graphs differ by the optimizer's state, a few percent,
# and a fit over them is compile-time noise amplified (k came out 1 from 10.4 and
# 9.4 s of a 2-layer stack's two AdamW steps).
MIN_SHARE_SPREAD = 0.05
# A predicted saving under this share of the compile is within the noise of
# compile times: not worth a rewrite, said as "would not pay".
MIN_SAVING_SHARE = 0.05
XLA_CPU_BASIS = "fresh/repeated cost ratio measured on XLA:CPU"
# Not computations: what the model leaves out ("": an HLO parameter).
DATA_OPS = ("xla__device_data", "prim__Constant", "")


@dataclass(frozen=True)
class GraphSize:
    """One compiled graph: its compile time, fresh and repeated instructions."""

    compile_time_s: float
    fresh: int  # instructions outside repeated layers, and the first layer's
    # the instructions of layers 2..N of identical layers, and the optimizer's
    # update of parameters whose ops and shapes another parameter's update has too
    repeated: int


@dataclass(frozen=True)
class ScanCost:
    """A graph's compile time plainly and with ``scan_layers``, predicted."""

    first_layer_s: float  # the graph with one layer: its fresh content
    per_layer_s: float  # each further layer
    loop_s: float  # the scan loop's own compile
    scanned_s: float
    saving_s: float
    pays: bool
    break_even_layers: int  # the fewest layers for which scanning saves; 0: none
    basis: str  # where the fresh/repeated ratio came from
    layers: int = 0
    compile_s: float = 0.0  # the graph's, as it is
    update_per_layer_s: float = 0.0  # each further layer's optimizer update, as it is
    sliced_update_s: float = 0.0  # what scanning adds a layer: its update compiled fresh

    @property
    def saved_per_layer_s(self) -> float:
        """What scanning saves on each layer after the first, before its loop."""
        return (1 - STACKED_LAYER) * self.per_layer_s - self.sliced_update_s

    def pays_from_layers(self) -> int:
        """The fewest layers of this stack for which the saving pays (over
        ``MIN_SAVING_SHARE`` of the compile, which grows with the layers too);
        0 when no depth does."""
        grows = self.per_layer_s + self.update_per_layer_s
        net = self.saved_per_layer_s - MIN_SAVING_SHARE * grows
        if net <= 0:
            return 0
        one_layer = self.compile_s - (self.layers - 1) * grows
        return math.floor((self.loop_s + MIN_SAVING_SHARE * one_layer) / net) + 2


def fit_fresh_ratio(graphs: Sequence[GraphSize]) -> float | None:
    """``k`` from the run's graphs by least squares of ``T = a U + r R``;
    None when they do not determine it (one graph, or all alike in shares)."""
    suu = sum(g.fresh * g.fresh for g in graphs)
    srr = sum(g.repeated * g.repeated for g in graphs)
    sur = sum(g.fresh * g.repeated for g in graphs)
    det = suu * srr - sur * sur
    if len(graphs) < 2 or det <= MIN_SHARE_SPREAD * suu * srr:  # shares too alike
        return None
    sut = sum(g.fresh * g.compile_time_s for g in graphs)
    srt = sum(g.repeated * g.compile_time_s for g in graphs)
    fresh_rate = (sut * srr - srt * sur) / det
    repeated_rate = (srt * suu - sut * sur) / det
    if fresh_rate <= 0 or repeated_rate <= 0:
        return None
    ratio = fresh_rate / repeated_rate
    # Outside this range the graphs disagree with the model (a backward pass
    # whose repeated layers were not found, say): keep the measured ratio.
    return ratio if 1.0 <= ratio <= 200.0 else None


def scan_cost(
    graph: GraphSize,
    layers: int,
    ratio: float | None = None,
    fitted_over: int = 0,
    *,
    layer_repeated: int | None = None,
    update_per_layer: int = 0,
) -> ScanCost:
    """``graph``'s compile with its ``layers`` identical layers scanned.

    ``ratio``: ``k`` fitted from the run (``fitted_over`` graphs); None: XLA:CPU's.
    ``layer_repeated``: the instructions of layers 2..N (None: all of the graph's
    repeated ones); ``update_per_layer``: the optimizer's update instructions of
    one layer's parameters (a training step; 0 without one).
    """
    k = ratio if ratio is not None else FRESH_TO_REPEATED
    basis = (
        f"fresh/repeated cost ratio fitted over {fitted_over} graphs" if ratio else XLA_CPU_BASIS
    )
    repeated = graph.repeated if layer_repeated is None else layer_repeated
    scale = graph.compile_time_s / (k * graph.fresh + graph.repeated)
    first = scale * k * graph.fresh
    per_layer = scale * repeated / max(1, layers - 1)
    loop = LOOP_TO_FRESH * first
    sliced = scale * (k - 1) * SLICED_UPDATE * update_per_layer
    saved_per_layer = (1 - STACKED_LAYER) * per_layer - sliced
    saving = (layers - 1) * saved_per_layer - loop
    return ScanCost(
        first_layer_s=first,
        per_layer_s=per_layer,
        loop_s=loop,
        scanned_s=graph.compile_time_s - saving,
        saving_s=saving,
        pays=saving > MIN_SAVING_SHARE * graph.compile_time_s,
        break_even_layers=math.floor(loop / saved_per_layer) + 2 if saved_per_layer > 0 else 0,
        basis=basis,
        layers=layers,
        compile_s=graph.compile_time_s,
        update_per_layer_s=scale * update_per_layer,
        sliced_update_s=sliced,
    )
