"""The scan advice's sentences (``xlacli.analysis.advice.scan``): its verdict and
the estimate behind it, the same in the terminal and on the page."""

from __future__ import annotations

from xlacli.analysis.advice.scan_cost import MIN_SAVING_SHARE, STACKED_LAYER
from xlacli.analysis.advice.scan_verdict import LOOP, MIN_SHARE, NOISE, SHARE, SLICED_UPDATE
from xlacli.report.advice import ScanAdvice
from xlacli.units import format_seconds


def scan_optimizer_note(advice: ScanAdvice) -> str:
    """The optimizer's per-parameter update, apart from the layers: scanning keeps it."""
    return (
        f"the optimizer's per-parameter update: {advice.optimizer_instructions} HLO instructions"
        f" ({advice.optimizer_share:.0%} of the graph), which scan_layers does not change"
    )


def scan_verdict(advice: ScanAdvice) -> str:
    """What scan_layers would do to the compile: advised, or why not."""
    change = (
        f"predicted compile {format_seconds(advice.graph_compile_time_s)}"
        f" -> {format_seconds(advice.predicted_compile_time_s)}"
    )
    if advice.pays:
        return (
            "torch_xla.experimental.scan_layers compiles one layer's body, in a loop: "
            f"{change} (saves {format_seconds(advice.predicted_saving_time_s)})"
        )
    if not advice.not_advised_because:  # a report written before the reasons were kept
        return (
            f"scan_layers would not pay here: {change}; the loop's own compile"
            f" ({format_seconds(advice.loop_compile_time_s)}) outweighs the {advice.layers - 1}"
            " further layers it removes; it pays from about"
            f" {advice.break_even_layers} layers"
        )
    reasons = [_REASONS[code](advice) for code in advice.not_advised_because if code in _REASONS]
    costly = set(advice.not_advised_because) - {SHARE}
    depth = (
        f"it would pay from about {advice.advised_from_layers} layers"
        if advice.advised_from_layers
        else "it would pay at no depth of these layers"
    )
    head = "scan_layers would not pay here" if costly else "scan_layers is not advised here"
    return f"{head}: {change}; {'; '.join([*reasons, depth])}"


def _small_share(advice: ScanAdvice) -> str:
    return f"the layers make {advice.share:.0%} of the graph, under the {MIN_SHARE:.0%} advised"


def _sliced_update(advice: ScanAdvice) -> str:
    saved = (1 - STACKED_LAYER) * advice.per_layer_compile_time_s
    return (
        "in a training step each scanned layer's gradient leaves the loop as a slice of a"
        " stacked one, and the layer's optimizer update compiles afresh with it"
        f" ({format_seconds(advice.sliced_update_compile_time_s)} a layer), more than"
        f" scanning saves a layer ({format_seconds(saved)})"
    )


def _loop_outweighs(advice: ScanAdvice) -> str:
    further = advice.layers - 1
    return (
        f"the loop's own compile ({format_seconds(advice.loop_compile_time_s)}) outweighs"
        f" the {further} further layer{'' if further == 1 else 's'} it removes"
    )


def _within_noise(advice: ScanAdvice) -> str:
    return (
        f"the saving ({format_seconds(advice.predicted_saving_time_s)}) is under"
        f" {MIN_SAVING_SHARE:.0%} of the compile, within its noise"
    )


_REASONS = {
    SHARE: _small_share,
    SLICED_UPDATE: _sliced_update,
    LOOP: _loop_outweighs,
    NOISE: _within_noise,
}


def scan_model_note(advice: ScanAdvice) -> str:
    sliced = (
        f", each layer's update compiled afresh when scanned"
        f" {format_seconds(advice.sliced_update_compile_time_s)}"
        if advice.sliced_update_compile_time_s
        else ""
    )
    return (
        f"estimate from this run's compile: the first layer's graph"
        f" {format_seconds(advice.first_layer_compile_time_s)}, each further layer"
        f" {format_seconds(advice.per_layer_compile_time_s)}, the loop"
        f" {format_seconds(advice.loop_compile_time_s)}{sliced} ({advice.cost_basis})"
    )
