"""Context of the run page's memory and precision section: each graph's peak and
biggest buffers, the step's peak, the device's own figures, the precision mix
(instructions, bytes and matmul FLOPs by element type), checkpoints and warnings."""

from __future__ import annotations

from typing import Any

from xlacli.paths import display_location
from xlacli.render.html.context import RunContext, graph_anchor
from xlacli.render.memory import checkpoint_summary, device_memory_text, graph_warnings, matmul_mix
from xlacli.report.memory import GraphPrecision, PrecisionMix, RunMemory
from xlacli.report.run_report import GraphRecord


def context(run: RunContext) -> dict[str, Any] | None:
    """The run's memory facts and one entry per graph that has any; None without them."""
    report = run.report
    graphs = [
        graph
        for graph in report.graphs
        if graph.memory is not None or graph.precision is not None or graph.checkpoint
    ]
    if not graphs and report.memory is None:
        return None
    return {
        "run": _run_facts(report.memory) if report.memory is not None else None,
        "graphs": [_graph_item(graph) for graph in graphs],
    }


def _run_facts(memory: RunMemory) -> dict[str, Any]:
    peak = memory.peak_step
    autocast = sorted({kind for kind in memory.autocast.values() if kind})
    return {
        "peak": peak,
        "peak_graphs": [{"hash": h, "anchor": graph_anchor(h)} for h in peak.graphs]
        if peak
        else [],
        "device": device_memory_text(memory),
        "autocast": ", ".join(autocast),
    }


def _graph_item(graph: GraphRecord) -> dict[str, Any]:
    memory, precision, checkpoint = graph.memory, graph.precision, graph.checkpoint
    has_matmuls = precision is not None and precision.requested.total_dot_flops > 0
    return {
        "hash": graph.hash,
        "anchor": graph_anchor(graph.hash),
        "memory": memory,
        "peak_site": display_location(memory.peak_site) if memory else "",
        "peak_library": display_location(memory.peak_library_site) if memory else "",
        "matmuls": matmul_mix(precision) if precision is not None and has_matmuls else "",
        "autocast": precision.autocast if precision is not None else None,
        "checkpoint": checkpoint_summary(checkpoint)
        if checkpoint and checkpoint.opt_barriers
        else "",
        "buffers": [
            {
                "name": buffer.name,
                "shape": buffer.shape,
                "bytes": buffer.bytes,
                "role": buffer.role,
                "op": buffer.op,
                "source": display_location(buffer.source) or "",
                "library": display_location(buffer.library_source) or "",
            }
            for buffer in (memory.biggest if memory else ())
        ],
        "mix": _mix_rows(precision) if precision is not None else [],
        "warnings": graph_warnings(graph),
    }


def _mix_rows(precision: GraphPrecision) -> list[dict[str, Any]]:
    """One row per element type: instructions, bytes and matmul share, as asked and compiled."""
    requested, optimized = precision.requested, precision.optimized
    kinds = set(requested.instructions) | set(requested.dot_flops)
    if optimized is not None:
        kinds |= set(optimized.instructions) | set(optimized.dot_flops)
    rows = [
        {
            "type": kind,
            "instructions": requested.instructions.get(kind, 0),
            "bytes": requested.bytes.get(kind, 0),
            "matmul_share": _share(requested, kind),
            "compiled_instructions": optimized.instructions.get(kind, 0) if optimized else None,
            "compiled_share": _share(optimized, kind) if optimized else None,
        }
        for kind in kinds
    ]
    return sorted(rows, key=lambda row: (-row["bytes"], row["type"]))


def _share(mix: PrecisionMix, kind: str) -> str:
    return f"{mix.dot_share(kind):.0%}" if mix.total_dot_flops else "-"
