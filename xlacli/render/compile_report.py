"""The compile report: one row per distinct graph, totals, and what to run next."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from xlacli.paths import display_path
from xlacli.render.console import stdout_console
from xlacli.render.units import format_bytes, format_seconds
from xlacli.report import GraphRecord, RunReport, dump_report

SHORT_HASH = 8


def render_compile_report(report: RunReport, output_format: str, console: Console | None = None) -> None:
    """Print the report on stdout: a rich table, or JSON only."""
    if output_format == "json":
        sys.stdout.write(dump_report(report))
        return
    (console or stdout_console()).print(compile_report_text(report))


def compile_report_text(report: RunReport) -> RenderableType:
    """The terminal view of a report."""
    parts: list[RenderableType] = [_title(report)]
    if report.graphs:
        parts.append(graph_table(report.graphs))
    else:
        parts.append(Text("No graph was compiled.", style="yellow"))
    parts.append(_totals(report))
    parts.extend(Text.from_markup(line) for line in next_commands(report))
    return Group(*parts)


def _title(report: RunReport) -> Text:
    versions = report.versions.get("torch_xla")
    what = "training steps" if report.train else "steps"
    steps = (
        f"{report.steps} {what}"
        if report.steps == report.steps_requested
        else f"{report.steps} of {report.steps_requested} {what}"
    )
    suffix = f", torch_xla {versions}" if versions else ""
    return Text.assemble(
        ("xlacli compile ", "bold"), (report.model, "bold cyan"), f"  {report.device}, {steps}{suffix}"
    )


def graph_table(graphs: Iterable[GraphRecord]) -> Table:
    """One row per distinct graph."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in (
        ("graph", "left"),
        ("site", "left"),
        ("IR", "right"),
        ("HLO", "right"),
        ("opt", "right"),
        ("fusions", "right"),
        ("in", "right"),
        ("out", "right"),
        ("temp", "right"),
        ("compile", "right"),
        ("runs", "right"),
        ("median run", "right"),
    ):
        table.add_column(name, justify=justify, no_wrap=name != "site")  # type: ignore[arg-type]
    for graph in graphs:
        table.add_row(
            graph.hash[:SHORT_HASH],
            _site_text(graph),
            str(graph.ir_nodes),
            _count(graph.hlo_instructions),
            _count(graph.optimized_hlo_instructions),
            _count(graph.fusions),
            format_bytes(graph.input_bytes),
            format_bytes(graph.output_bytes),
            format_bytes(graph.temp_bytes),
            format_seconds(graph.compile_time_s),
            str(graph.executions),
            format_seconds(graph.execute_time_s),
        )
    return table


def _site_text(graph: GraphRecord) -> Text:
    site = Text(graph.site or "?")
    if graph.trigger == "host_sync":
        site.append(" (value read)", style="yellow")
    elif graph.trigger == "step_end":
        site.append(" (step)", style="dim")
    return site


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _totals(report: RunReport) -> Text:
    graphs = len(report.graphs)
    return Text(
        f"\n{report.compilations} compilation{_s(report.compilations)} "
        f"({format_seconds(report.total_compile_time_s)}), "
        f"{report.executions} execution{_s(report.executions)} "
        f"({format_seconds(report.total_execute_time_s)}), "
        f"{graphs} distinct graph{_s(graphs)}"
    )


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def next_commands(report: RunReport) -> list[str]:
    """The run folder and the next command worth running (rich markup)."""
    run_dir = display_path(report.run_dir)
    lines = [f"Run folder: [bold]{escape(run_dir)}[/]"]
    pair = _same_site_pair(report.graphs)
    if pair is not None:
        left, right = (f"{run_dir}/{g.files['hlo_after']}" for g in pair)
        lines.append(
            f"Next: [bold]xlacli diff-hlo {escape(left)} {escape(right)}[/]"
            "  (what changed between two graphs of the same site)"
        )
    elif report.ok:
        lines.append(
            f"Next: [bold]xlacli profile {escape(report.model)} --steps 50[/]"
            "  (where the time goes)"
        )
    return lines


def _same_site_pair(graphs: Iterable[GraphRecord]) -> tuple[GraphRecord, GraphRecord] | None:
    seen: dict[str | None, GraphRecord] = {}
    for graph in graphs:
        if "hlo_after" not in graph.files:
            continue
        if graph.site in seen:
            return seen[graph.site], graph
        seen[graph.site] = graph
    return None
