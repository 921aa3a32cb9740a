"""Context of the run page's torch.compile (Dynamo) section: the frames Dynamo
compiled (with their FX graphs and the XLA graphs they lowered to), the graph
breaks with their reason and line, and the recompiles a failed guard caused."""

from __future__ import annotations

from typing import Any

from xlacli.analysis.recompiles.hints import hint_for
from xlacli.paths import display_location
from xlacli.render.dynamo import dynamo_headline, frames_by_site, frames_per_step
from xlacli.render.html.context import RunContext, graph_anchor
from xlacli.render.html.run_sections import snippet_rows
from xlacli.report.run_report import DynamoRecord


def context(run: RunContext) -> dict[str, Any] | None:
    """Dynamo's part of the run; None when the run did not use torch.compile."""
    report = run.report
    dynamo = report.dynamo
    if dynamo is None:
        return None
    per_step = [
        {"step": r.step, "frames": count}
        for r, count in zip(report.step_records, frames_per_step(report, dynamo), strict=True)
    ]
    return {
        "headline": dynamo_headline(dynamo).plain,
        "mode": report.mode,
        "per_step": per_step,
        "warmup": report.warmup,
        "steady_frames": sum(s["frames"] for s in per_step if s["step"] >= report.warmup),
        "frames": _frame_rows(dynamo, {graph.hash for graph in report.graphs}),
        "breaks": [
            {
                "location": display_location(b.location) or b.location,
                "inside": display_location(b.library_location) if b.library_location else None,
                "reason": b.reason,
                "count": b.count,
                "snippet": snippet_rows(run.snippets.get(b.location)),
            }
            for b in dynamo.graph_breaks
        ],
        "break_fix": hint_for("graph_break"),
        "guards": [
            {
                "step": frame.step,
                "steady": frame.step is not None and frame.step >= report.warmup,
                "function": frame.function,
                "location": display_location(frame.guard_read or frame.location) or frame.location,
                "guard": frame.guard_failure,
                "snippet": snippet_rows(run.snippets.get(frame.guard_read or frame.location)),
            }
            for frame in dynamo.frames
            if frame.guard_failure
        ],
        "guard_fix": hint_for("dynamo_guard"),
    }


def _frame_rows(dynamo: DynamoRecord, known: set[str]) -> list[dict[str, Any]]:
    """One row per compiled Python frame, its compiles summed (as the terminal shows);
    its XLA graphs link to their sections when the report has them (``known``)."""
    return [
        {
            "function": function,
            "location": display_location(location) or location,
            "compiles": len(frames),
            "compile_ids": ", ".join(f.compile_id for f in frames),
            "fx_ops": "/".join(str(f.fx_ops) for f in frames),
            "graphs": [
                {"hash": h, "anchor": graph_anchor(h) if h in known else None}
                for h in dict.fromkeys(h for f in frames for h in f.graph_hashes)
            ],
            "time_s": sum(f.compile_time_s for f in frames),
        }
        for (function, location), frames in frames_by_site(dynamo).items()
    ]
