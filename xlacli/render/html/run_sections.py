"""Context functions of the run page's header, timeline, graph table, compiles, fallbacks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xlacli.analysis.recompiles.phases import LOOP, PHASE_WORDS, SETUP, timeline_edges
from xlacli.assemble.source_snippets import SourceSnippet
from xlacli.errors import EXIT_CHECK_FAILED, EXIT_INCOMPLETE
from xlacli.paths import display_location, display_path
from xlacli.render.compile_report import TRIGGER_WORDS, UNROLLED_FIX
from xlacli.render.html.context import RunContext, event_anchor, graph_anchor
from xlacli.render.html.svg import TimelineMark, timeline_svg
from xlacli.render.problems import problem_lines
from xlacli.render.recompiles import step_label
from xlacli.report.run_report import CompileEvent, StepRecord
from xlacli.units import format_seconds, short_hash


def header(run: RunContext) -> dict[str, Any]:
    """Model, device, versions, settings and how the run ended."""
    report = run.report
    error = report.error
    return {
        "model": display_path(report.model),
        "device": report.device,
        "versions": dict(sorted(report.versions.items())),
        "settings": {
            "steps": f"{report.steps} of {report.steps_requested}",
            "mode": "training" if report.trained else "inference",
            "warm-up": str(report.warmup),
            "run folder": display_path(report.run_dir),
        },
        "status": _status(run),
        "error": error,
        "problems": problem_lines(report),
        "totals": {
            "compilations": report.compilations,
            "steady-state recompiles": report.steady_state_compiles,
            "distinct graphs": len(report.graphs),
            "executions": report.executions,
            "compile time": format_seconds(report.total_compile_time_s),
        },
    }


def _status(run: RunContext) -> tuple[bool, str]:
    """Whether the command succeeded, and how it ended: "completed · exit 0"..."""
    error = run.report.error
    if error is not None:
        return False, f"{error.kind} · exit {error.exit_code}: {error.message}"
    if run.check is not None and not run.check.get("passed", True):
        return False, f"check failed · exit {EXIT_CHECK_FAILED}"
    if run.report.problems:
        return False, f"incomplete report · exit {EXIT_INCOMPLETE}"
    return True, "completed · exit 0"


def timeline_context(run: RunContext) -> dict[str, Any] | None:
    """One mark per step: compiled, CPU fallback, value read or cached."""
    report = run.report
    if not report.step_records:
        return None
    by_step: dict[int | None, list[CompileEvent]] = {}
    for event in report.events:
        by_step.setdefault(event.step, []).append(event)
    marks = [_mark(record, by_step.get(record.step, [])) for record in report.step_records]
    # The loop's own warm-up, after any setup syncs (analysis/recompiles/phases.py).
    edges = timeline_edges([record.phase for record in report.step_records], report.warmup)
    return {
        "svg": timeline_svg(marks, edges),
        "steps": len(marks),
        "warmup": report.warmup,
        "edges": edges,
        "steady": sum(mark.steady_recompile for mark in marks),
    }


def _mark(record: StepRecord, events: list[CompileEvent]) -> TimelineMark:
    if events:
        kind = "compiled"
    elif record.fallbacks:
        kind = "fallback"
    elif record.value_reads or record.executions > 1:
        kind = "read"
    else:
        kind = "cached"
    hover = [f"step {record.step}: {kind}", f"wall {format_seconds(record.wall_time_s)}"]
    if record.phase == SETUP:
        hover.append("setup (before the loop)")
    hover += [
        f"compiled {short_hash(event.graph_hash)} in {format_seconds(event.compile_time_s)}"
        f" ({event.cause.category}, {PHASE_WORDS.get(event.phase, event.phase)})"
        for event in events
    ]
    if record.graph_hashes:
        hover.append("ran " + ", ".join(short_hash(h) for h in record.graph_hashes))
    if record.value_reads:
        hover.append(f"{record.value_reads} value read(s)")
    if record.fallbacks:
        hover.append(f"{record.fallbacks} op(s) on the CPU")
    # As the terminal's timeline: expected compiles after the warm-up are not alarms.
    steady = any(event.steady_state for event in events)
    flags = tuple(
        flag
        for flag, happened in (("read", record.value_reads), ("fallback", record.fallbacks))
        if happened and flag != kind
    )
    return TimelineMark(record.step, kind, steady, " · ".join(hover), flags)


def graph_table_context(run: RunContext) -> dict[str, Any] | None:
    """One sortable row per graph."""
    if not run.report.graphs:
        return None
    rows = [
        {
            "hash": graph.hash,
            "anchor": graph_anchor(graph.hash),
            "site": display_location(graph.site) or "?",
            "trigger": TRIGGER_WORDS.get(graph.trigger, graph.trigger),
            "graph": graph,
        }
        for graph in run.report.graphs
    ]
    return {"rows": rows}


def recompiles(run: RunContext) -> dict[str, Any] | None:
    """Every compile with its cause, source snippet, before/after and fix."""
    if not run.report.events:
        return None
    items = [
        _event_item(index, event, run.snippets) for index, event in enumerate(run.report.events)
    ]
    steady = [item for item in items if item["steady"]]
    warmup = [item for item in items if not item["steady"]]
    unrolled = [
        {
            "loop": display_location(loop.loop),
            "body": display_location(loop.body),
            "iterations": loop.iterations,
            "graph": loop.graph_hash,
            "graph_anchor": graph_anchor(loop.graph_hash),
            "instructions": loop.hlo_instructions,
        }
        for loop in run.report.unrolled_loops
    ]
    served = [
        {
            "step": graph.step,
            "location": display_location(graph.site) or "unknown location",
            "detail": graph.detail,
            "graph": graph.graph_hash,
        }
        for graph in run.report.served_graphs
        if graph.steady_state
    ]
    return {
        "steady": steady,
        "warmup": warmup,
        "warmup_steps": run.report.warmup,
        "unrolled": unrolled,
        "unrolled_fix": UNROLLED_FIX,
        "served": served,
    }


def _event_item(
    index: int, event: CompileEvent, snippets: Mapping[str, SourceSnippet]
) -> dict[str, Any]:
    cause = event.cause
    return {
        "anchor": event_anchor(index),
        "step": step_label(event),
        "phase": PHASE_WORDS.get(event.phase, event.phase) if event.phase != LOOP else None,
        "steady": event.steady_state,
        "category": cause.category,
        "location": display_location(cause.location) or "unknown location",
        "library_location": display_location(cause.library_location),
        "detail": cause.detail,
        "changes": before_after(cause.detail),
        "hint": cause.hint,
        "compile_time": format_seconds(event.compile_time_s),
        "graph": event.graph_hash,
        "graph_anchor": graph_anchor(event.graph_hash),
        "compared_with": event.compared_with,
        "snippet": snippet_rows(snippets.get(cause.location or "")),
    }


def before_after(detail: str) -> list[dict[str, str]] | None:
    """Each change a cause's detail names (``; ``-separated), split at its own
    arrow: ``input 0 shape f32[64,32] -> f32[40,32]; input 1 shape s64[64] ->
    s64[40]`` is two before/after pairs. None when a part is no change (the
    detail is shown as it is)."""
    changes = []
    for part in detail.split("; "):
        before, arrow, after = part.partition(" -> ")
        if not arrow:
            return None
        changes.append({"before": before, "after": after})
    return changes


def snippet_rows(snippet: SourceSnippet | None) -> list[dict[str, Any]] | None:
    """Numbered lines of a snippet, the line it points at marked."""
    if snippet is None:
        return None
    return [
        {"number": number, "text": text, "target": number == snippet.line}
        for number, text in enumerate(snippet.lines, start=snippet.first_line)
    ]


def fallbacks(run: RunContext) -> dict[str, Any] | None:
    """Ops that ran on the CPU, with the user's line and its code."""
    if not run.report.fallback_ops:
        return None
    return {
        "ops": [
            {
                "op": op.op,
                "count": op.count,
                "location": display_location(op.location),
                "library_location": display_location(op.library_location),
                "snippet": snippet_rows(run.snippets.get(op.location or "")),
            }
            for op in run.report.fallback_ops
        ]
    }
