"""The figures ``--mode both`` compares, one ``ModeFigures`` per mode's report.

Pure: reports (and a profile's measurements) in, figures out; rendered by
``render/compare.py``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from xlacli.report.run_report import RunReport


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
