"""The memory and precision lines of the compile report.

One line per graph, only for graphs worth a line (matmuls, checkpoint
barriers, a warning, or a peak of 1 MiB or more), then the step's peak, the
device's own figures (or why there are none), the biggest buffers of the
largest graph and what the user most likely did not mean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from rich.text import Text

from xlacli.analysis.memory.peaks import largest_graph
from xlacli.analysis.memory.precision import backend_note, precision_warnings
from xlacli.paths import display_walked
from xlacli.report.memory import BufferRecord, CheckpointFacts, GraphPrecision, RunMemory
from xlacli.report.run_report import GraphRecord, RunReport
from xlacli.units import counted, format_bytes, short_hash

WORTH_A_LINE = 1 << 20  # bytes
BIGGEST_SHOWN = 3


def memory_view(report: RunReport) -> list[Text]:
    """The lines, or none when no graph has memory or precision facts."""
    graphs = [g for g in report.graphs if _worth_a_line(g)]
    if not graphs:
        return []
    lines = [Text("\nMemory and precision", style="bold")]
    lines.extend(graph_line(graph) for graph in graphs)
    if report.memory is not None:
        lines.extend(_run_lines(report.memory))
    largest = largest_graph(report.graphs)
    if largest is not None and largest.memory is not None and largest.memory.biggest:
        lines.append(Text(f"Biggest buffers at the peak of {short_hash(largest.hash)}:"))
        lines.extend(Text(f"  {line}") for line in biggest_lines(largest.memory.biggest))
    lines.extend(
        Text(f"{graphs_named(hashes)}: {warning}", style="yellow")
        for warning, hashes in warnings_once(graphs).items()
    )
    return lines


def warnings_once(graphs: list[GraphRecord]) -> dict[str, list[str]]:
    """Each warning once, with the graphs it holds for, in the graphs' order
    (an optimizer's f64 in four graphs is one line, not four)."""
    held: dict[str, list[str]] = {}
    for graph in graphs:
        for warning in graph_warnings(graph):
            held.setdefault(warning, []).append(graph.hash)
    return held


def graphs_named(hashes: list[str], shown: int = 3) -> str:
    """``63af1d66``, ``63af1d66, 8a7b3c2d``, or ``4 graphs (63af1d66, 8a7b3c2d, ...)``."""
    names = [short_hash(graph_hash) for graph_hash in hashes]
    if len(names) <= shown:
        return ", ".join(names)
    return f"{len(names)} graphs ({', '.join(names[:shown])}, ...)"


def _worth_a_line(graph: GraphRecord) -> bool:
    precision, checkpoint = graph.precision, graph.checkpoint
    return bool(
        (graph.memory is not None and graph.memory.peak_bytes >= WORTH_A_LINE)
        or (precision is not None and precision.requested.total_dot_flops)
        or (checkpoint is not None and checkpoint.opt_barriers)
        or graph_warnings(graph)
    )


def graph_line(graph: GraphRecord) -> Text:
    """``d5bed824  peak 13.4 MiB (temporaries 12.4 MiB) at block.py:40; matmuls f32 100%; ...``"""
    parts = []
    memory = graph.memory
    if memory is not None:
        where = display_walked(memory.peak_site, memory.peak_library_site)
        parts.append(
            f"peak {format_bytes(memory.peak_bytes)} "
            f"(temporaries {format_bytes(memory.peak_temp_bytes)})"
            + (f" at {where}" if where else "")
        )
    if graph.precision is not None and graph.precision.requested.total_dot_flops:
        parts.append("matmuls " + matmul_mix(graph.precision))
    if graph.checkpoint is not None and graph.checkpoint.opt_barriers:
        parts.append(checkpoint_summary(graph.checkpoint))
    return Text(f"{short_hash(graph.hash)}  " + "; ".join(parts))


def matmul_mix(precision: GraphPrecision) -> str:
    """``bf16 100%`` (as requested), ``-> f32 100% compiled`` when XLA changed it."""
    requested = dot_shares(precision.requested.dot_flops)
    optimized = precision.optimized
    if optimized is not None and dot_shares(optimized.dot_flops) != requested:
        return f"{requested} (compiled: {dot_shares(optimized.dot_flops)})"
    return requested


def dot_shares(flops: Mapping[str, int]) -> str:
    """``bf16 100%``: the share of matmul FLOPs in each element type."""
    total = sum(flops.values())
    if not total:
        return "-"
    ordered = sorted(flops.items(), key=lambda item: -item[1])
    return ", ".join(f"{kind} {count / total:.0%}" for kind, count in ordered)


def checkpoint_summary(checkpoint: CheckpointFacts) -> str:
    """``4 opt-barriers (0 after XLA), 20 recomputed matmuls in 4 regions (20 kept)``."""
    text = f"{checkpoint.opt_barriers} opt-barriers"
    if checkpoint.opt_barriers_optimized is not None:
        text += f" ({checkpoint.opt_barriers_optimized} after XLA)"
    text += (
        f", {checkpoint.recomputed_dots} recomputed matmuls in "
        f"{checkpoint.recomputed_regions} regions"
    )
    if checkpoint.recomputed_dots_kept is not None:
        text += f" ({checkpoint.recomputed_dots_kept} kept)"
    return text


def graph_warnings(graph: GraphRecord) -> list[str]:
    """Precision surprises and checkpoints XLA undid."""
    warnings: list[str] = []
    if graph.precision is not None:
        warnings += precision_warnings(graph.precision)
        note = backend_note(graph.precision)
        if note:
            warnings.append(f"matmuls requested in bf16/f16: {note}")
    checkpoint = graph.checkpoint
    if checkpoint is not None and checkpoint.opt_barriers:
        kept = checkpoint.recomputed_dots_kept
        if kept is not None and kept < checkpoint.recomputed_dots:
            warnings.append(
                f"XLA merged {checkpoint.recomputed_dots - kept} of "
                f"{checkpoint.recomputed_dots} recomputed matmuls back into the forward pass"
            )
        if checkpoint.opt_barriers_optimized == 0:
            warnings.append(
                "XLA removed the opt-barriers before scheduling (XLA:CPU does): it may "
                "run the recomputation early, and the checkpoint then saves no memory"
            )
    return warnings


def biggest_lines(buffers: tuple[BufferRecord, ...]) -> list[str]:
    """``4 x f32[8,4,64,64] 512 KiB temporary, aten__softmax at block.py:40``."""
    groups = Counter((b.shape, b.bytes, b.role, b.op, b.source, b.library_source) for b in buffers)
    lines = []
    # Largest buffer first (a group of equal buffers by the size of one), then the most.
    ordered = sorted(groups.items(), key=lambda item: (-item[0][1], -item[1]))
    for (shape, size, role, op, source, library), count in ordered[:BIGGEST_SHOWN]:
        where = display_walked(source, library)
        made = ", ".join(part for part in (op, f"at {where}" if where else "") if part)
        times = f"{count} x " if count > 1 else ""
        lines.append(f"{times}{shape} {format_bytes(size)} {role}" + (f", {made}" if made else ""))
    return lines


def _run_lines(memory: RunMemory) -> list[Text]:
    lines = []
    peak = memory.peak_step
    if peak is not None:
        lines.append(
            Text(
                f"Step peak: {format_bytes(peak.peak_bytes)} (step {peak.step}: the peaks "
                f"of its {counted(len(peak.graphs), 'graph')} summed)"
            )
        )
    lines.append(Text(f"Device memory: {device_memory_text(memory)}"))
    return lines


def device_memory_text(memory: RunMemory) -> str:
    """What the runtime reported after the last step, or why it reported nothing."""
    if memory.device:
        last = memory.device[max(memory.device)]
        used, peak, limit = (last.get(k) for k in ("bytes_used", "peak_bytes_used", "bytes_limit"))
        text = f"{format_bytes(used)} in use"
        if peak is not None:
            text += f", peak {format_bytes(peak)}"
        return text + (f" of {format_bytes(limit)}" if limit else "")
    if memory.device_unavailable:
        if "GetAllocatorStats" in memory.device_unavailable:
            return "not available on CPU (XLA:CPU keeps no allocator statistics)"
        if "spmd_device_str" in memory.device_unavailable or "SPMD:" in memory.device_unavailable:
            # torch_xla: "Check failed: device != spmd_device_str ... MemoryInfo not supported"
            return (
                "not available under SPMD (the virtual SPMD device has no memory statistics; "
                "the per-device input, output and temporary bytes of each graph are above)"
            )
        return f"not available ({memory.device_unavailable})"
    return "not sampled"
