"""The scan advice's sentences (``xlacli.analysis.scan_advice``): its verdict and
the estimate behind it, the same in the terminal and on the page."""

from __future__ import annotations

from xlacli.report.advice import ScanAdvice
from xlacli.units import format_seconds


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
    return (
        f"scan_layers would not pay here: {change}; the loop's own compile"
        f" ({format_seconds(advice.loop_compile_time_s)}) outweighs the {advice.layers - 1}"
        " further layers it removes; it pays from about"
        f" {advice.break_even_layers} layers"
    )


def scan_model_note(advice: ScanAdvice) -> str:
    return (
        f"estimate from this run's compile: the first layer's graph"
        f" {format_seconds(advice.first_layer_compile_time_s)}, each further layer"
        f" {format_seconds(advice.per_layer_compile_time_s)}, the loop"
        f" {format_seconds(advice.loop_compile_time_s)} ({advice.cost_basis})"
    )
