"""The headless profile summary: step time, where the time goes, top ops, graphs."""

from __future__ import annotations

import sys

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.paths import display_location, display_path
from xlacli.render.console import plain_table, stdout_console
from xlacli.report.profile import ProfileSummary, dump_summary
from xlacli.units import format_seconds, short_hash

BREAKDOWN_LABELS = {
    "python_s": "host: Python and the rest",
    "tracing_s": "host: tracing (torch_xla)",
    "compile_s": "host: compile",
    "host_to_device_s": "host to device",
    "device_to_host_s": "device to host",
    "execute_s": "device: graph execution",
}


def render_profile(summary: ProfileSummary, output_format: str) -> None:
    """Print the summary on stdout: rich text, or JSON only."""
    if output_format == "json":
        sys.stdout.write(dump_summary(summary))
        return
    stdout_console().print(profile_text(summary))


def profile_text(summary: ProfileSummary) -> RenderableType:
    """The terminal view."""
    parts: list[RenderableType] = [
        Text.assemble(
            ("xlacli profile ", "bold"),
            (display_path(summary.model), "bold cyan"),
            f"  {summary.device}, {summary.steps} profiled steps after {summary.warmup} warm-up",
        )
    ]
    if summary.step_time_s is not None:
        times = summary.step_time_s
        line = Text.assemble(
            ("Step time  ", "bold"),
            f"p50 {format_seconds(times.p50)}  p90 {format_seconds(times.p90)}  "
            f"max {format_seconds(times.max)}",
        )
        if summary.samples_per_s:
            line.append(
                f"   throughput {summary.samples_per_s:,.0f} samples/s (batch {summary.batch_size})"
            )
        parts.append(line)
    if summary.breakdown:
        window = format_seconds(summary.breakdown.get("window_s"))
        parts.append(
            Text.assemble(
                (f"\nWhere the time goes ({window} window)", "bold"),
                ("  the device runs a step's graph while the host traces the next", "dim"),
            )
        )
        parts.append(_breakdown_table(summary))
        parts.extend(host_split_lines(summary.host_split))
        if summary.tracing_advice:
            parts.append(Text(f"  {summary.tracing_advice}", style="cyan"))
    if summary.top_ops:
        parts.append(Text(f"\nTop HLO ops ({summary.source_of_op_times}):", style="bold"))
        parts.append(_ops_table(summary))
    if summary.graphs:
        parts.append(Text("\nGraphs run in the window:", style="bold"))
        parts.append(_graphs_table(summary))
    for note in summary.notes:
        parts.append(Text(f"warning: {note}", style="yellow"))
    if summary.trace_files:
        xplane = next((f for f in summary.trace_files if f.endswith(".xplane.pb")), None)
        parts.append(Text(f"\nTrace: {display_path(xplane or summary.trace_files[0])}"))
    parts.append(Text(f"Run folder: {display_path(summary.run_dir)}"))
    return Group(*parts)


def _breakdown_table(summary: ProfileSummary) -> Table:
    window = summary.breakdown.get("window_s", 0.0)
    table = Table(box=None, pad_edge=False, show_header=False)
    table.add_column("what")
    table.add_column("time", justify="right")
    table.add_column("share", justify="right")
    for key, label in BREAKDOWN_LABELS.items():
        seconds = summary.breakdown.get(key, 0.0)
        share = f"{100 * seconds / window:.0f}%" if window > 0 else "-"
        table.add_row(label, format_seconds(seconds), share)
    return table


def _ops_table(summary: ProfileSummary) -> Table:
    table = plain_table(
        ("op", "left"), ("kind", "left"), ("time", "right"), ("count", "right"), ("source", "left")
    )
    for op in summary.top_ops:
        table.add_row(
            op.name,
            op.kind or "-",
            format_seconds(op.time_s),
            str(op.count),
            display_location(op.source) or "-",
        )
    return table


def _graphs_table(summary: ProfileSummary) -> Table:
    table = plain_table(("graph", "left"), ("site", "left"), ("runs", "right"), ("time", "right"))
    for graph in summary.graphs:
        table.add_row(
            short_hash(graph.hash),
            display_location(graph.site) or "?",
            str(graph.executions),
            format_seconds(graph.time_s),
        )
    return table


def host_split_lines(split: dict[str, float]) -> list[Text]:
    """Under the breakdown: how much of the host's Python is lazy op tracing."""
    if not split:
        return []
    return [
        Text.assemble(
            ("  of which tracing torch ops onto XLA tensors  ", "dim"),
            f"{format_seconds(split.get('op_tracing_s'))}  "
            f"({split.get('ops_per_step', 0):.0f} ops/step, "
            f"{format_seconds(split.get('op_tracing_per_step_s'))}/step)",
        ),
        Text.assemble(
            ("  of which your Python and the rest          ", "dim"),
            format_seconds(split.get("user_python_s")),
        ),
    ]
