"""The recompile view: a timeline of steps, then one block per recompile."""

from __future__ import annotations

import dataclasses

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from xlacli.analysis.recompiles.phases import (
    AFTER_LOOP,
    LOOP,
    NEW_PHASE,
    PERIODIC,
    SETUP,
    TimelineEdges,
    timeline_edges,
)
from xlacli.paths import display_location, source_line
from xlacli.repeats import equal_runs, shown_of_run, stretches
from xlacli.report.run_report import CompileCause, CompileEvent, FallbackOp, RunReport, ServedGraph
from xlacli.units import counted, format_seconds

COMPILED, CACHED, NEW_SITE = "●", "·", "◆"
SETUP_EDGE, WARM_EDGE = "┊", "│"
INDENT = " " * 6
# The compiles that are not steady-state recompiles, by phase (analysis/recompiles/phases.py).
PHASE_HEADINGS = (
    (SETUP, "Setup compiles ({n}, before the loop)"),
    (LOOP, "Warm-up compiles ({n}, expected)"),
    (NEW_PHASE, "New phases ({n}: sites whose first graph came after the warm-up, not recompiles)"),
    (
        PERIODIC,
        "Periodic graphs ({n}: a warm site's second graph, alternating with its first "
        "and cached when it recurs, not recompiles)",
    ),
    (AFTER_LOOP, "After the loop ({n})"),
)


def recompile_view(report: RunReport) -> RenderableType:
    """Timeline, steady-state recompiles first, warm-up compiles, CPU fallbacks."""
    parts: list[RenderableType] = [timeline(report)]
    steady = [event for event in report.events if event.steady_state]
    if steady:
        parts.append(Text(f"\nSteady-state recompiles ({len(steady)}):", style="bold red"))
        parts.extend(group_blocks(grouped(steady)))
    elif report.steps > report.warmup:
        # Dynamo's guard recompiles are counted apart (its own section): say whose.
        whose = "XLA compile" if report.dynamo and report.dynamo.recompiles else "compile"
        parts.append(Text(f"No {whose} after the warm-up steps.", style="green"))
    for phase, heading in PHASE_HEADINGS:
        expected = [e for e in report.events if not e.steady_state and e.phase == phase]
        if not expected:
            continue
        parts.append(Text("\n" + heading.format(n=len(expected)) + ":", style="bold"))
        singles: list[CompileEvent] = []
        for group in grouped(expected):
            if group[0].cause.category in GROUPED_CATEGORIES:
                parts.extend(_folded_lines(singles))
                singles = []
                parts.append(group_block(group))
            else:
                singles.extend(group)  # folded line by line below
        parts.extend(_folded_lines(singles))
    if report.fallback_ops:
        parts.append(Text("\nOps run on the CPU (fallbacks):", style="bold yellow"))
        parts.extend(_fallback_line(op) for op in report.fallback_ops)
    return Group(*parts)


def timeline(report: RunReport) -> Text:
    """``steps 0-4: ●··│●·`` with the loop's warm-up boundary and graphs per step.

    The boundary is where the loop's own warm-up ends (analysis/recompiles/phases.py), after
    any setup syncs; a new phase's or a periodic graph's compile is not an alarm.
    """
    compiled_steps = {event.step for event in report.events}
    steady_steps = {event.step for event in report.events if event.steady_state}
    # Steps whose only compiles start a new phase or a periodic graph.
    expected = {e.step for e in report.events if e.phase in (NEW_PHASE, PERIODIC)} - steady_steps
    edges = timeline_edges([record.phase for record in report.step_records], report.warmup)
    marks: list[tuple[str, str]] = []  # (symbol, style): a step's mark, or an edge
    for index, record in enumerate(report.step_records):
        if index == edges.loop_start:
            marks.append((SETUP_EDGE, "dim"))
        if index == edges.warm:
            marks.append((WARM_EDGE, "dim"))
        if record.step in compiled_steps:
            if record.step in expected:
                marks.append((NEW_SITE, "cyan"))
            else:
                marks.append((COMPILED, "bold red" if record.step in steady_steps else "yellow"))
        else:
            marks.append((CACHED, "dim" if record.phase == SETUP else "green"))
    text = Text("Steps: ", style="bold")
    for symbol, style in _folded(marks):
        text.append(symbol, style=style)
    text.append(_timeline_legend(report, edges, bool(expected)), style="dim")
    per_step = report.executions_per_step
    if per_step and max(per_step) > 1:
        text.append("\nGraphs run per step: " + _counts_folded(per_step), style="yellow")
        text.append(f"  (more than 1: {_why_several(report)})", style="dim")
    return text


def _folded(marks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The marks with each long run of one step mark cut to its ends and a count."""
    shown: list[tuple[str, str]] = []
    for start, end in equal_runs(marks):
        head, tail = shown_of_run(start, end)
        shown += marks[head.start : head.stop]
        if tail:
            shown.append((f"…{tail.start - head.stop:,} more…", "dim"))
            shown += marks[tail.start : tail.stop]
    return shown


def _counts_folded(counts: tuple[int, ...]) -> str:
    """``1 2 1×9,990 2``: a value repeated more than 4 times as value×count, and a
    repeating pattern once with its count: ``1 (2 1×9)×999`` (a read every 10 steps)."""
    # (value, how many times in a row)
    tokens = [(counts[start], end - start) for start, end in equal_runs(counts)]

    def shown(token: tuple[int, int]) -> str:
        value, repeats = token
        return f"{value}×{repeats:,}" if repeats > 4 else " ".join([str(value)] * repeats)

    parts = []
    for stretch in stretches(tokens):
        block = " ".join(
            shown(token) for token in tokens[stretch.start : stretch.start + stretch.period]
        )
        parts.append(block if stretch.repeats == 1 else f"({block})×{stretch.repeats:,}")
    return " ".join(parts)


def _timeline_legend(report: RunReport, edges: TimelineEdges, expected: bool) -> str:
    legend = f"   {COMPILED} compiled  {CACHED} cached"
    if expected:
        legend += f"  {NEW_SITE} new phase or periodic graph"
    if edges.loop_start is not None:
        legend += f"  {SETUP_EDGE} loop starts after {counted(edges.loop_start, 'setup sync')}"
    if edges.warm is not None:
        legend += f"  {WARM_EDGE} end of warm-up ({report.warmup} steps)"
    return legend


def _why_several(report: RunReport) -> str:
    """Eager ops and torch.compile run graphs of their own inside a step."""
    own = {g.trigger for g in report.graphs} & {"eager", "dynamo"}
    if own:
        makers = " and ".join(
            sorted({"eager": "eager ops", "dynamo": "torch.compile"}[t] for t in own)
        )
        return f"{makers} run graphs of their own, or a value read or a sync cut the step"
    return "the step was cut, by a value read or a sync of its own"


# Categories whose consecutive compiles are one pattern, shown once with a count.
GROUPED_CATEGORIES = frozenset({"unsynced_loop"})


def grouped(events: list[CompileEvent]) -> list[list[CompileEvent]]:
    """Consecutive compiles of one grouped pattern (same step, category and line)
    folded together; every other compile alone."""
    groups: list[list[CompileEvent]] = []
    for event in events:
        last = groups[-1][-1] if groups else None
        same_place = last is not None and (
            last.step,
            last.cause.category,
            last.cause.location,
        ) == (event.step, event.cause.category, event.cause.location)
        # The same story told twice in a step (eager mode: one graph per op of a
        # batch that changed size) is one block with its count.
        told_alike = same_place and last is not None and last.cause == event.cause
        if same_place and (event.cause.category in GROUPED_CATEGORIES or told_alike):
            groups[-1].append(event)
        else:
            groups.append([event])
    return groups


def group_block(
    group: list[CompileEvent], *, hint_above: bool = False, also_above: bool = False
) -> RenderableType:
    """A group of one pattern's compiles, told by its last (which has seen them all)."""
    total = sum(event.compile_time_s for event in group)
    last = dataclasses.replace(group[-1], compile_time_s=total)
    return event_block(last, len(group), hint_above=hint_above, also_above=also_above)


def group_blocks(groups: list[list[CompileEvent]]) -> list[RenderableType]:
    """Each group's block; a fix the block just above gave is not said again."""
    blocks: list[RenderableType] = []
    seen_also: set[CompileCause] = set()
    for index, group in enumerate(groups):
        cause = group[-1].cause
        above = index > 0 and groups[index - 1][-1].cause.hint == cause.hint
        said = bool(cause.also) and set(cause.also) <= seen_also
        seen_also.update(cause.also)
        blocks.append(group_block(group, hint_above=above, also_above=said))
    return blocks


def served_block(graph: ServedGraph) -> RenderableType:
    """A graph change a cache served, laid out as a compile's block: no compile
    to explain here (it compiled earlier in the process), what its inputs say."""
    head = Text.assemble(
        ("  ", "dim"),
        (f"step {graph.step}" if graph.step is not None else "after the steps", "bold"),
        "  ",
        ("graph change (served from a cache)", "bold magenta"),
        "  ",
        (display_location(graph.site) or "unknown location", "cyan"),
    )
    lines: list[RenderableType] = [head]
    code = source_line(graph.site) if graph.site else None
    if code:
        lines.append(Text(f"      │ {code}", style="white"))
    lines.append(Padding(Text(f"graph {graph.graph_hash[:8]}: {graph.detail}"), (0, 0, 0, 6)))
    lines.append(
        Padding(Text("run it in a fresh process to see its compile explained"), (0, 0, 0, 6))
    )
    return Group(*lines)


def event_block(
    event: CompileEvent, count: int = 1, *, hint_above: bool = False, also_above: bool = False
) -> RenderableType:
    """One recompile (or ``count`` of one pattern): category, the user's line and
    its code, the library line inside it, before/after, cost, fix, other readings."""
    cause = event.cause
    head = Text.assemble(
        ("  ", "dim"),
        (step_label(event), "bold"),
        "  ",
        (cause.category, "bold magenta"),
        (f" ×{count}" if count > 1 else "", "bold magenta"),
        "  ",
        (display_location(cause.location) or "unknown location", "cyan"),
        (f"  {_cost(event, '+', ' compile')}", "dim"),
    )
    lines: list[RenderableType] = [head]
    code = source_line(cause.location) if cause.location else None
    if code:
        lines.append(Text(f"      │ {code}", style="white"))
    if cause.library_location:
        inside = display_location(cause.library_location)
        lines.append(Text(f"      (inside {inside})", style="dim"))
    # Padding keeps a wrapped line under its first; the trailing spaces it pads
    # with are dropped by the console's writer (render/console.py).
    lines.append(Padding(Text(cause.detail), (0, 0, 0, 6)))
    if cause.hint and hint_above:  # the block before gave the same fix
        lines.append(Padding(Text.from_markup("[green]fix:[/] as above"), (0, 0, 0, 6)))
    elif cause.hint:
        lines.append(
            Padding(Text.from_markup(f"[green]fix:[/] {escape(cause.hint)}"), (0, 0, 0, 6))
        )
    for other in () if also_above else cause.also:  # the block above said the same
        where = display_location(other.location) or "unknown location"
        lines.append(
            Padding(
                Text.assemble(("also: ", "dim"), (other.category, "magenta"), f" at {where}: ")
                + Text(other.detail, style="dim"),
                (0, 0, 0, 6),
            )
        )
    return Group(*lines)


def step_label(event: CompileEvent) -> str:
    """``step 3``; a compile outside every step says which side of the loop it is on."""
    if event.step is not None:
        return f"step {event.step}"
    return "after the loop" if event.phase == AFTER_LOOP else "setup"


def _folded_lines(events: list[CompileEvent]) -> list[Text]:
    """One line per run of expected compiles alike (same step, category and lines:
    eager mode compiles one graph per op and shape), with its count."""

    def key(event: CompileEvent) -> tuple[object, ...]:
        cause = event.cause
        return (event.step, event.phase, cause.category, cause.location, cause.library_location)

    lines = []
    for start, end in equal_runs([key(event) for event in events]):
        run = events[start:end]
        total = sum(event.compile_time_s for event in run)
        lines.append(_warmup_line(dataclasses.replace(run[0], compile_time_s=total), len(run)))
    return lines


def _warmup_line(event: CompileEvent, count: int = 1) -> Text:
    inside = display_location(event.cause.library_location)
    return Text.assemble(
        ("  ", "dim"),
        step_label(event),
        "  ",
        (event.cause.category, "magenta"),
        (f" ×{count}" if count > 1 else "", "magenta"),
        "  ",
        (display_location(event.cause.location) or "", "cyan"),
        (f" (inside {inside})" if inside else "", "dim"),
        (f"  {_cost(event)}", "dim"),
    )


def _cost(event: CompileEvent, sign: str = "", what: str = "") -> str:
    """The compile time; an eager op's compile is not timed by torch_xla
    (no CompileTime sample), so it has none."""
    if event.compile_time_s == 0.0:
        return "not timed"
    return f"{sign}{format_seconds(event.compile_time_s)}{what}"


def _fallback_line(op: FallbackOp) -> Text:
    where = f" at {display_location(op.location)}" if op.location else ""
    inside = display_location(op.library_location)
    return Text.assemble(
        f"  {op.op} ×{op.count}{where}", (f" (inside {inside})" if inside else "", "dim")
    )
