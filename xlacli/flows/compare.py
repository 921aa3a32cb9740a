"""``--mode both``: the same model lazily and under torch.compile, each in its
own child, then one table comparing them (``xlacli.render.compare``)."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.report.run import RunReport

COMPARED_MODES = ("lazy", "dynamo")


@dataclass(frozen=True)
class ModeFigures:
    """One mode's figures in the comparison (None: not measured)."""

    mode: str
    graphs: int
    compiles: int
    compile_time_s: float
    median_step_s: float | None
    optimized_hlo_instructions: int | None
    peak_device_bytes: int | None
    graph_breaks: int
    recompiles: int  # steady-state XLA recompiles
    dynamo_recompiles: int
    run_dir: str
    error: str | None = None
    ops_traced_per_step: float | None = None  # profile: torch ops traced lazily per step
    op_tracing_per_step_s: float | None = None


def mode_out(out: Path | None, mode: str) -> Path | None:
    """Each mode's run folder: ``OUT/lazy`` and ``OUT/dynamo`` (default: new ones)."""
    return out / mode if out is not None else None


def run_modes(run: Callable[[str], Any]) -> dict[str, Any]:
    """Run each compared mode in turn (each in its own child); results by mode."""
    return {mode: run(mode) for mode in COMPARED_MODES}


def figures(
    report: RunReport,
    median_step_s: float | None = None,
    host_split: dict[str, float] | None = None,
) -> ModeFigures:
    """The compared figures of one mode's report.

    ``median_step_s``: a profile's measured step time; else the median wall
    time of the cached steps after the warm-up (None: there is none).
    ``host_split``: a profile's op-tracing measurements.
    """
    split = host_split or {}
    dynamo = report.dynamo
    optimized = [g.optimized_hlo_instructions for g in report.graphs]
    peaks = [_device_bytes(g.input_bytes, g.output_bytes, g.temp_bytes) for g in report.graphs]
    return ModeFigures(
        mode=report.mode,
        graphs=len(report.graphs),
        compiles=report.compilations,
        compile_time_s=report.total_compile_time_s,
        median_step_s=median_step_s if median_step_s is not None else _median_step(report),
        optimized_hlo_instructions=None
        if not optimized or None in optimized
        else sum(o for o in optimized if o is not None),
        peak_device_bytes=max((p for p in peaks if p is not None), default=None),
        graph_breaks=sum(b.count for b in dynamo.graph_breaks) if dynamo else 0,
        recompiles=report.steady_state_compiles,
        dynamo_recompiles=dynamo.recompiles if dynamo else 0,
        run_dir=report.run_dir,
        error=report.error.message if report.error else None,
        ops_traced_per_step=split.get("ops_per_step"),
        op_tracing_per_step_s=split.get("op_tracing_per_step_s"),
    )


def _median_step(report: RunReport) -> float | None:
    """The median wall time of the steady-state steps that compiled nothing; None
    without one (a step that compiles is not the mode's step time: comparing
    them told torch.compile 2x slower where its cached steps were 18x faster)."""
    steady = [
        r.wall_time_s
        for r in report.step_records
        if r.step >= report.warmup and r.compilations == 0
    ]
    return statistics.median(steady) if steady else None


def _device_bytes(*sizes: int | None) -> int | None:
    """A graph's device footprint while it runs: inputs, outputs and temporaries."""
    if all(size is None for size in sizes):
        return None
    return sum(size or 0 for size in sizes)


def compare_compile(
    target: Any, *, out: Path | None, force: bool, output_format: str, **options: Any
) -> list[Any]:
    """``xlacli compile MODEL --mode both``: capture each mode, print the table.

    Returns:
        Each mode's ``CaptureResult``, lazy first: its error (if any) is the
        caller's to raise, after what it writes for every run (``--html``).
    """
    from xlacli.flows.session import capture
    from xlacli.render.compare import render_comparison

    results = run_modes(
        lambda mode: capture(
            target,
            mode=mode,
            out=mode_out(out, mode),
            force=force,
            label=f"Compiling {target.path.name} ({mode})",
            **options,
        )
    )
    reports = {mode: result.report for mode, result in results.items()}
    render_comparison(reports, {m: figures(r) for m, r in reports.items()}, output_format)
    return list(results.values())


def raise_first_error(results: Any) -> None:
    """Raise the first run's error, in mode order (lazy first), if any run failed."""
    for result in results:
        if result.error is not None:
            raise result.error


def compare_profile(target: Any, request: Any) -> int:
    """``xlacli profile MODEL --mode both``: profile each mode, print the table.

    The median step time is the profiler's (the traced steps); the other
    figures come from each run's report.

    Raises:
        XlacliError: the first mode's error, after the table is printed.
    """
    from xlacli.flows.profile import capture_profile
    from xlacli.render.compare import render_comparison
    from xlacli.report.profile import summary_to_dict

    runs = run_modes(
        lambda mode: capture_profile(target, request, mode, mode_out(request.out, mode))
    )
    reports = {mode: result.report for mode, (result, _) in runs.items()}
    compared = {
        mode: figures(
            result.report,
            summary.step_time_s.p50 if summary.step_time_s else None,
            summary.host_split,
        )
        for mode, (result, summary) in runs.items()
    }
    profiles = {mode: summary_to_dict(summary) for mode, (_, summary) in runs.items()}
    render_comparison(
        reports, compared, request.output_format, command="profile", extra={"profiles": profiles}
    )
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        for result, _ in runs.values():
            announce_run_html(result.paths.root, result.report)
    raise_first_error(result for result, _ in runs.values())
    return 0
