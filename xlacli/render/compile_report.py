"""The compile report: one row per distinct graph, totals, and what to run next."""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from xlacli.analysis.recompiles.phases import EXPECTED_CATEGORIES, SETUP
from xlacli.paths import display_location, display_path
from xlacli.render.advice import advice_view
from xlacli.render.console import natural_width
from xlacli.render.dynamo import dynamo_view
from xlacli.render.memory import memory_view
from xlacli.render.problems import problem_lines
from xlacli.render.profile import ProfileView
from xlacli.render.recompiles import recompile_view
from xlacli.render.sharding import spmd_view
from xlacli.render.verdict import run_verdict, verdict_is_bad
from xlacli.render.view import Block, Whole
from xlacli.report.profile import ProfileSummary, summary_to_dict
from xlacli.report.run_report import GraphRecord, RunReport, dump_report, report_to_dict
from xlacli.units import counted, format_bytes, format_seconds, short_hash

COMPACT_BELOW = 110  # columns


@dataclass(frozen=True)
class CompileReportView:
    """A run's report: the table and its sections, then the commands to run next."""

    report: RunReport

    def text(self, width: int) -> list[Block]:
        # Commands are printed apart, soft-wrapped: whatever the terminal's width,
        # a command stays whole on its line (a console would crop it).
        commands = [Whole(Text.from_markup(line)) for line in next_commands(self.report)]
        return [compile_report_text(self.report, width), *commands]

    def json(self) -> str:
        return dump_report(self.report)


@dataclass(frozen=True)
class SavedRunView:
    """``xlacli report``: a saved run's report, and its profile summary if it was profiled."""

    report: RunReport
    profile: ProfileSummary | None = None

    def text(self, width: int) -> list[Block]:
        blocks = CompileReportView(self.report).text(width)
        if self.profile is None:
            return blocks
        return [*blocks, Text(""), *ProfileView(self.profile).text(width)]

    def json(self) -> str:
        data = report_to_dict(self.report)
        if self.profile is not None:
            data["profile"] = summary_to_dict(self.profile)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def compile_report_text(report: RunReport, width: int = 160) -> RenderableType:
    """The terminal view of a report, for a console ``width`` columns wide."""
    verdict_style = "bold red" if verdict_is_bad(report) else "bold green"
    parts: list[RenderableType] = [Text(run_verdict(report), style=verdict_style), _title(report)]
    parts.extend(Text(f"incomplete report: {line}", style="red") for line in problem_lines(report))
    if report.graphs:
        table = graph_table(report.graphs)
        compact = width < COMPACT_BELOW or natural_width(table) > width
        parts.append(graph_table(report.graphs, compact=True) if compact else table)
        parts.append(Text(COMPACT_LEGEND if compact else LEGEND, style="dim"))
        parts.extend(memory_view(report))
    else:
        parts.append(Text("No graph was compiled.", style="yellow"))
    spmd = spmd_view(report.graphs)  # SPMD runs only: render/sharding.py
    if spmd is not None and natural_width(spmd) > width:
        spmd = spmd_view(report.graphs, narrow=True)
    if spmd is not None:
        parts.append(spmd)
    if report.events and report.steps > 1:
        parts.append(Text(""))
        parts.append(recompile_view(report))
    parts.extend(unrolled_view(report))
    dynamo = dynamo_view(report)  # torch.compile's frames, breaks, guard failures
    if dynamo is not None and natural_width(dynamo) > width:
        dynamo = dynamo_view(report, narrow=True)
    if dynamo is not None:
        parts.append(dynamo)
    parts.extend(advice_view(report))  # compile cost by line, scan/bucket/value-read advice
    parts.append(_totals(report))
    return Group(*parts)


def _title(report: RunReport) -> Text:
    versions = report.versions.get("torch_xla")
    what = "training steps" if report.trained else "steps"
    steps = (
        f"{report.steps} {what}"
        if report.steps == report.steps_requested
        else f"{report.steps} of {report.steps_requested} {what}"
    )
    setup = sum(1 for record in report.step_records if record.phase == SETUP)
    if setup:  # the steps are the loop's iterations; a script's setup syncs come first
        steps += f" after {counted(setup, 'setup sync')}"
    suffix = f", torch_xla {versions}" if versions else ""
    if report.launcher:  # a world of one process the script started itself
        steps += f" in the one process {report.launcher} started"
    return Text.assemble(
        (f"xlacli {report.command} ", "bold"),
        (display_path(report.model), "bold cyan"),
        f"  {report.device}, {steps}{suffix}",
    )


UNROLLED_FIX = (
    "call torch_xla.sync() once per iteration, so every iteration runs the same graph "
    "(accumulate on the device across them and read once at the end), or keep the loop "
    "on the device with torch_xla.experimental.fori_loop"
)


def unrolled_view(report: RunReport) -> list[RenderableType]:
    """Each loop traced into one graph once per iteration, with its fix."""
    if not report.unrolled_loops:
        return []
    parts: list[RenderableType] = [
        Text("\nLoops unrolled into one graph (no sync inside):", style="bold")
    ]
    for loop in report.unrolled_loops:
        size = f", {loop.hlo_instructions} HLO instructions" if loop.hlo_instructions else ""
        parts.append(
            Text.assemble(
                "  ",
                (display_location(loop.loop) or "", "cyan"),
                f"  {loop.iterations} iterations traced into graph {short_hash(loop.graph_hash)}"
                f"{size}: the graph grows with the loop's trip count (its body, "
                f"{display_location(loop.body)}, once per iteration)",
            )
        )
    parts.append(Text(f"  fix: {UNROLLED_FIX}", style="green"))
    return parts


def graph_table(graphs: Iterable[GraphRecord], *, compact: bool = False) -> Table:
    """One row per distinct graph; sizes are XLA's buffer assignment.

    ``compact`` (narrow terminals) shows sites by file name, the three sizes in
    one column, and drops the columns worth least (IR nodes, fusions), so that
    the site is never wrapped inside its ``file:line``.
    """
    table = Table(
        box=None,
        pad_edge=False,
        header_style="bold",
        show_edge=False,
        padding=(0, 1, 0, 0) if compact else (0, 1),
    )
    table.add_column("graph", no_wrap=True)
    table.add_column("site", min_width=12, no_wrap=True)
    numbers = ["HLO", "opt"] if compact else ["IR", "HLO", "opt", "fus"]
    numbers += ["in/out/temp"] if compact else ["in", "out", "temp"]
    for name in (*numbers, "compile", "runs", "median"):
        table.add_column(name, justify="right", no_wrap=True)
    for graph, alike in _eager_runs(list(graphs)):
        sizes = [
            format_bytes(graph.input_bytes),
            format_bytes(graph.output_bytes),
            format_bytes(graph.temp_bytes),
        ]
        counts = [graph.hlo_instructions, graph.optimized_hlo_instructions]
        if not compact:
            counts = [graph.ir_nodes, *counts, graph.fusions]
        table.add_row(
            short_hash(graph.hash) + (f" +{alike - 1}" if alike > 1 else ""),
            _site_text(graph, compact=compact),
            *(_count(count) for count in counts),
            *(
                ["/".join(size.replace(" ", "").replace("iB", "") for size in sizes)]
                if compact
                else sizes
            ),
            "-" if graph.trigger == "eager" else format_seconds(graph.compile_time_s),
            str(graph.executions),
            format_seconds(graph.execute_time_s),
        )
    return table


def _eager_runs(graphs: list[GraphRecord]) -> list[tuple[GraphRecord, int]]:
    """Eager mode compiles one graph per op and shape: a run of eager graphs at one
    line is one row (the first's hash ``+N``, their sizes and runs summed)."""
    rows: list[tuple[GraphRecord, int]] = []
    start = 0
    while start < len(graphs):
        end = start + 1
        first = graphs[start]
        while (
            first.trigger == "eager"
            and end < len(graphs)
            and graphs[end].trigger == "eager"
            and graphs[end].site == first.site
        ):
            end += 1
        rows.append((_summed(graphs[start:end]) if end - start > 1 else first, end - start))
        start = end
    return rows


def _summed(graphs: list[GraphRecord]) -> GraphRecord:
    def total(values: Iterable[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known else None

    return dataclasses.replace(
        graphs[0],
        ir_nodes=total(g.ir_nodes for g in graphs),
        hlo_instructions=total(g.hlo_instructions for g in graphs),
        optimized_hlo_instructions=total(g.optimized_hlo_instructions for g in graphs),
        fusions=total(g.fusions for g in graphs),
        input_bytes=total(g.input_bytes for g in graphs),
        output_bytes=total(g.output_bytes for g in graphs),
        temp_bytes=total(g.temp_bytes for g in graphs),
        executions=sum(g.executions for g in graphs),
        execute_time_s=None,
    )


LEGEND = (
    "IR: lazy IR nodes; HLO/opt: HLO instructions before/after XLA's optimizations; "
    "fus: fusions; in/out/temp: bytes; median: the device's time per run (the first left out)"
)
COMPACT_LEGEND = (
    "HLO/opt: HLO instructions before/after XLA's optimizations; in/out/temp: bytes; "
    "median: the device's time per run (the first left out)"
)


# Why a graph ran, in words (the terminal and the HTML page say the same).
TRIGGER_WORDS = {
    "step_end": "step",
    "user_sync": "your sync",
    "host_sync": "value read",
    "dynamo": "torch.compile",
    "torch_xla_compile": "torch_xla.compile",
    "eager": "eager op",
}
# Narrow terminals: a word each, so the site keeps its whole file:line.
COMPACT_TRIGGER_WORDS = {
    "host_sync": "read",
    "dynamo": "dynamo",
    "torch_xla_compile": "compile",
    "eager": "eager",
}
_COMPILED_BY = ("dynamo", "torch_xla_compile", "eager")


def _site_text(graph: GraphRecord, *, compact: bool) -> Text:
    site = display_location(graph.site) or "?"
    if compact:
        site = site.rpartition("/")[2]
    text = Text(site)
    words = (COMPACT_TRIGGER_WORDS if compact else TRIGGER_WORDS).get(graph.trigger)
    if graph.trigger == "host_sync":
        text.append(f" ({words})", style="yellow")
    elif graph.trigger in _COMPILED_BY:
        text.append(f" ({words})", style="magenta")
    elif graph.trigger == "step_end" and not compact:
        text.append(f" ({words})", style="dim")
    if graph.framework_site and not compact:  # trainer.train(): the framework's own line
        text.append(f" in {display_location(graph.framework_site)}", style="dim")
    return text


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def _totals(report: RunReport) -> Text:
    graphs = len(report.graphs)
    return Text(
        f"\n{counted(report.compilations, 'compilation')}{_compiled_by(report)} "
        f"({format_seconds(report.total_compile_time_s)}), "
        f"{counted(report.executions, 'execution')} "
        f"({format_seconds(report.total_execute_time_s)} on the device), "
        f"{counted(graphs, 'distinct graph')}"
    )


def _compiled_by(report: RunReport) -> str:
    """`` (7 eager op graphs, 2 torch_xla.compile graphs)`` when not all
    compiles are lazy syncs' (eager ops' compiles are not timed)."""
    kinds = {"eager": "eager op graph", "torch_xla_compile": "torch_xla.compile graph"}
    parts = [
        counted(n, kinds[trigger])
        for trigger in kinds
        if (n := sum(g.compilations for g in report.graphs if g.trigger == trigger))
    ]
    if not any(g.trigger == "eager" for g in report.graphs):
        return ""
    return f" ({', '.join(parts)}; eager ops' compiles are not timed)"


def next_commands(report: RunReport) -> list[str]:
    """The run folder and the next command worth running (rich markup).

    The command has its line to itself (after "Next:"), quoted for a shell and
    with the options the run used, so it can be copied and run as it is; what
    it is for follows on the next line.
    """
    run_dir = display_path(report.run_dir)
    lines = [f"Run folder: [bold]{escape(run_dir)}[/]"]
    pair = _graphs_to_diff(report)
    if pair is not None:
        before, after = (short_hash(graph.hash) for graph in pair)
        command = shlex.join(["xlacli", "diff-hlo", run_dir, before, after])
        why = "what changed between a recompiled graph and the one before it"
    elif report.ok:
        # A -m module's label is "-m NAME"; a file's, its path.
        model = (
            report.model.split() if report.model.startswith("-m ") else [display_path(report.model)]
        )
        command = shlex.join(["xlacli", "profile", *model, "--steps", "50", *report.options])
        why = "where the time goes"
    else:
        return lines
    return [*lines, f"Next: [bold]{escape(command)}[/]", f"[dim]  ({why})[/]"]


def _graphs_to_diff(report: RunReport) -> tuple[GraphRecord, GraphRecord] | None:
    """The first recompile worth a look (steady-state first) and the graph it was
    compared with; an expected one (optimizer state, a lazy artefact) is not."""
    by_hash = {graph.hash: graph for graph in report.graphs}
    events = sorted(
        (
            e
            for e in report.events
            if e.compared_with and e.cause.category not in EXPECTED_CATEGORIES
        ),
        key=lambda e: not e.steady_state,
    )
    for event in events:
        pair = by_hash.get(event.compared_with or ""), by_hash.get(event.graph_hash)
        if all(graph is not None and "hlo_before" in graph.files for graph in pair):
            return pair  # type: ignore[return-value]
    return None
