"""The headless profile summary: step time, where the time goes, top ops, graphs."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.paths import display_location, display_path
from xlacli.render.console import plain_table
from xlacli.render.verdict import profile_verdict
from xlacli.render.view import Block, Whole
from xlacli.report.profile import OpTime, ProfileSummary, dump_summary
from xlacli.units import format_seconds, short_hash

# The host's rows (xlacli.analysis.profile.host_timeline.HOST_ROWS): they sum to the window.
BREAKDOWN_LABELS = {
    "python_s": "your Python",
    "op_tracing_s": "tracing torch ops onto XLA",
    "graph_s": "building and hashing the graph",
    "device_wait_s": "waiting for the device",
    "transfer_s": "transfers",
    "compile_s": "compile",
    "harness_s": "xlacli between steps",
}


@dataclass(frozen=True)
class ProfileView:
    """A profile's summary, then the paths of its trace and the tracing advice."""

    summary: ProfileSummary

    def text(self, width: int) -> list[Block]:
        summary = self.summary
        blocks: list[Block] = [profile_text(summary)]
        blocks.extend(Whole(line) for line in path_lines(summary))
        if summary.tracing_advice:
            advice, _, command = summary.tracing_advice.partition("\n")
            blocks.append(Text(f"{advice}{':' if command else ''}", style="cyan"))
            if command:  # alone on its line, never wrapped: it runs as printed
                blocks.append(Whole(Text(command, style="bold")))
        return blocks

    def json(self) -> str:
        return dump_summary(self.summary)


def profile_text(summary: ProfileSummary) -> RenderableType:
    """The terminal view."""
    verdict_style = "bold red" if summary.window_compiles else "bold green"
    parts: list[RenderableType] = [
        Text(profile_verdict(summary), style=verdict_style),
        Text.assemble(
            ("xlacli profile ", "bold"),
            (display_path(summary.model), "bold cyan"),
            f"  {summary.device}, {summary.steps} profiled steps after {summary.warmup} warm-up",
        ),
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
    if summary.breakdown.get("window_s"):
        window = format_seconds(summary.breakdown.get("window_s"))
        parts.append(
            Text.assemble(
                (f"\nThe host, {window} window", "bold"),
                ("  each millisecond in one row", "dim"),
            )
        )
        parts.append(_breakdown_table(summary))
        parts.append(device_line(summary.breakdown))
        parts.extend(host_split_lines(summary.host_split))
    if summary.top_ops:
        parts.append(
            Text(f"\nTop HLO ops, self time ({summary.source_of_op_times}):", style="bold")
        )
        parts.append(_ops_table(summary))
    if summary.lines:
        share = summary.line_share or 0.0
        parts.append(
            Text.assemble(
                ("\nDevice time by user line", "bold"),
                (f"  {share:.0%} of the ops' time is at a line of your code", "dim"),
            )
        )
        parts.append(_lines_table(summary))
    if summary.graphs:
        parts.append(Text("\nGraphs run in the window:", style="bold"))
        parts.append(_graphs_table(summary))
    for note in summary.notes:
        parts.append(Text(f"warning: {note}", style="yellow"))
    return Group(*parts)


def path_lines(summary: ProfileSummary) -> list[Text]:
    """Where the trace and the run are, each printed whole however narrow the
    terminal (``soft_wrap``): a path broken at the width cannot be copied."""
    lines = []
    if summary.trace_files:
        xplane = next((f for f in summary.trace_files if f.endswith(".xplane.pb")), None)
        lines.append(Text(f"\nTrace: {display_path(xplane or summary.trace_files[0])}"))
    lines.append(Text(f"Run folder: {display_path(summary.run_dir)}"))
    return lines


def _breakdown_table(summary: ProfileSummary) -> Table:
    window = summary.breakdown.get("window_s", 0.0)
    steps = max(summary.steps, 1)
    table = plain_table(
        ("host", "left"), ("window", "right"), ("share", "right"), ("per step", "right")
    )
    for key, label in BREAKDOWN_LABELS.items():
        seconds = summary.breakdown.get(key, 0.0)
        share = f"{100 * seconds / window:.0f}%" if window > 0 else "-"
        table.add_row(label, format_seconds(seconds), share, format_seconds(seconds / steps))
    table.add_row(
        Text("total", style="dim"), format_seconds(window), "100%", format_seconds(window / steps)
    )
    return table


def device_line(breakdown: dict[str, float]) -> Text:
    """The device beside the host: busy time and its overlap with the host's work, in seconds."""
    busy, overlap = breakdown.get("device_busy_s", 0.0), breakdown.get("overlap_s", 0.0)
    waited = max(busy - overlap, 0.0)
    return Text.assemble(
        ("device  ", "bold"),
        f"busy {format_seconds(busy)} of the window: {format_seconds(overlap)} of it "
        f"while the host did other work, {format_seconds(waited)} while it waited; "
        f"idle {format_seconds(breakdown.get('device_idle_s'))}",
    )


def op_line(op: OpTime) -> str:
    """The op's user line, else the library line its metadata names."""
    if op.user_line:
        return display_location(op.user_line) or op.user_line
    return f"- ({display_location(op.source)})" if op.source else "-"


def op_pass(op: OpTime) -> str:
    """``bwd`` for an op that differentiates its line's forward op, ``opt`` for an
    optimizer's update."""
    if not op.user_line:
        return ""
    return "bwd" if op.backward else "opt" if op.optimizer else "fwd"


def _ops_table(summary: ProfileSummary) -> Table:
    table = plain_table(
        ("op", "left"), ("kind", "left"), ("self", "right"), ("count", "right"), ("pass", "left")
    )
    table.columns[0].overflow = "fold"  # a long fusion name folds; the line never does
    table.add_column("line", no_wrap=True)
    for op in summary.top_ops:
        table.add_row(
            op.name,
            op.kind or "-",
            format_seconds(op.time_s),
            str(op.count),
            op_pass(op),
            op_line(op),
        )
    return table


def _lines_table(summary: ProfileSummary) -> Table:
    # The optimizer column only when a line holds an optimizer's update (a training script).
    optimizer = any(line.optimizer_s for line in summary.lines)
    columns = [("line", "left"), ("device", "right"), ("forward", "right"), ("backward", "right")]
    table = plain_table(*columns, *([("optimizer", "right")] if optimizer else []))
    for line in summary.lines:
        times: tuple[float, ...] = (line.time_s, line.forward_s, line.backward_s)
        times += (line.optimizer_s,) if optimizer else ()
        table.add_row(display_location(line.line), *(format_seconds(t) for t in times))
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
    """Under the host's rows: how many ops each step traces again."""
    if not split:
        return []
    return [
        Text.assemble(
            ("tracing  ", "bold"),
            f"{split.get('ops_per_step', 0):.0f} torch ops a step, "
            f"{format_seconds(split.get('op_tracing_per_step_s'))} a step",
        )
    ]
