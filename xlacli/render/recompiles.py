"""The recompile view: a timeline of steps, then one block per recompile."""

from __future__ import annotations

import dataclasses

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.text import Text

from xlacli.paths import display_location, source_line
from xlacli.report.run import CompileEvent, FallbackOp, RunReport
from xlacli.units import format_seconds

COMPILED, CACHED = "●", "·"


def recompile_view(report: RunReport) -> RenderableType:
    """Timeline, steady-state recompiles first, warm-up compiles, CPU fallbacks."""
    parts: list[RenderableType] = [timeline(report)]
    steady = [event for event in report.events if event.steady_state]
    if steady:
        parts.append(Text(f"\nSteady-state recompiles ({len(steady)}):", style="bold red"))
        parts.extend(group_block(group) for group in grouped(steady))
    elif report.steps > report.warmup:
        parts.append(Text("No compile after the warm-up steps.", style="green"))
    warmup = [event for event in report.events if not event.steady_state]
    if warmup:
        parts.append(Text(f"\nWarm-up compiles ({len(warmup)}, expected):", style="bold"))
        parts.extend(
            group_block(group)
            if group[0].cause.category in GROUPED_CATEGORIES
            else _warmup_line(group[0])  # only grouped categories form groups
            for group in grouped(warmup)
        )
    if report.fallback_ops:
        parts.append(Text("\nOps run on the CPU (fallbacks):", style="bold yellow"))
        parts.extend(_fallback_line(op) for op in report.fallback_ops)
    return Group(*parts)


def timeline(report: RunReport) -> Text:
    """``steps 0-4: ●··│●·`` with the warm-up boundary and graphs per step."""
    compiled_steps = {event.step for event in report.events}
    steady_steps = {event.step for event in report.events if event.steady_state}
    text = Text("Steps: ", style="bold")
    for record in report.step_records:
        if record.step == report.warmup and record.step > 0:
            text.append("│", style="dim")
        if record.step in compiled_steps:
            style = "bold red" if record.step in steady_steps else "yellow"
            text.append(COMPILED, style=style)
        else:
            text.append(CACHED, style="green")
    legend = f"   {COMPILED} compiled  {CACHED} cached"
    if 0 < report.warmup < len(report.step_records):
        legend += f"  │ end of warm-up ({report.warmup} steps)"
    text.append(legend, style="dim")
    per_step = report.executions_per_step
    if per_step and max(per_step) > 1:
        text.append("\nGraphs run per step: " + " ".join(map(str, per_step)), style="yellow")
        text.append(
            "  (more than 1: the step was cut, by a value read or a sync of its own)", style="dim"
        )
    return text


# Categories whose consecutive compiles are one pattern, shown once with a count.
GROUPED_CATEGORIES = frozenset({"unsynced_loop"})


def grouped(events: list[CompileEvent]) -> list[list[CompileEvent]]:
    """Consecutive compiles of one grouped pattern (same step, category and line)
    folded together; every other compile alone."""
    groups: list[list[CompileEvent]] = []
    for event in events:
        last = groups[-1][-1] if groups else None
        if (
            last is not None
            and event.cause.category in GROUPED_CATEGORIES
            and (last.step, last.cause.category, last.cause.location)
            == (event.step, event.cause.category, event.cause.location)
        ):
            groups[-1].append(event)
        else:
            groups.append([event])
    return groups


def group_block(group: list[CompileEvent]) -> RenderableType:
    """A group of one pattern's compiles, told by its last (which has seen them all)."""
    total = sum(event.compile_time_s for event in group)
    return event_block(dataclasses.replace(group[-1], compile_time_s=total), len(group))


def event_block(event: CompileEvent, count: int = 1) -> RenderableType:
    """One recompile (or ``count`` of one pattern): category, the user's line and
    its code, the library line inside it, before/after, cost, fix, other readings."""
    cause = event.cause
    head = Text.assemble(
        ("  step ", "dim"),
        (str(event.step), "bold"),
        "  ",
        (cause.category, "bold magenta"),
        (f" ×{count}" if count > 1 else "", "bold magenta"),
        "  ",
        (display_location(cause.location) or "unknown location", "cyan"),
        (f"  +{format_seconds(event.compile_time_s)} compile", "dim"),
    )
    lines: list[RenderableType] = [head]
    code = source_line(cause.location) if cause.location else None
    if code:
        lines.append(Text(f"      │ {code}", style="white"))
    if cause.library_location:
        inside = display_location(cause.library_location)
        lines.append(Text(f"      (inside {inside})", style="dim"))
    lines.append(Padding(Text(cause.detail), (0, 0, 0, 6)))
    if cause.hint:
        lines.append(
            Padding(Text.from_markup(f"[green]fix:[/] {escape(cause.hint)}"), (0, 0, 0, 6))
        )
    for other in cause.also:
        where = display_location(other.location) or "unknown location"
        lines.append(
            Padding(
                Text.assemble(("also: ", "dim"), (other.category, "magenta"), f" at {where}: ")
                + Text(other.detail, style="dim"),
                (0, 0, 0, 6),
            )
        )
    return Group(*lines)


def _warmup_line(event: CompileEvent) -> Text:
    inside = display_location(event.cause.library_location)
    return Text.assemble(
        ("  step ", "dim"),
        str(event.step),
        "  ",
        (event.cause.category, "magenta"),
        "  ",
        (display_location(event.cause.location) or "", "cyan"),
        (f" (inside {inside})" if inside else "", "dim"),
        (f"  {format_seconds(event.compile_time_s)}", "dim"),
    )


def _fallback_line(op: FallbackOp) -> Text:
    where = f" at {display_location(op.location)}" if op.location else ""
    return Text(f"  {op.op} ×{op.count}{where}")
