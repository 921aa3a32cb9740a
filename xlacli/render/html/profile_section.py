"""Context of a profiled run's section: step times, where the time goes, top ops."""

from __future__ import annotations

from typing import Any

from xlacli.paths import display_location
from xlacli.render.html.context import RunContext
from xlacli.render.html.svg import Segment, stacked_bar_svg, step_time_svg
from xlacli.render.profile import BREAKDOWN_LABELS
from xlacli.units import format_seconds


def context(run: RunContext) -> dict[str, Any] | None:
    """None for a run that was not profiled."""
    summary = run.profile
    if summary is None:
        return None
    times = summary.step_time_s
    segments = [
        Segment(label, summary.breakdown.get(key, 0.0)) for key, label in BREAKDOWN_LABELS.items()
    ]
    window = summary.breakdown.get("window_s", 0.0)
    return {
        "summary": summary,
        "times": times,
        "step_chart": step_time_svg(summary.step_times_s, times.p50, times.p90)
        if times and summary.step_times_s
        else None,
        "breakdown": stacked_bar_svg(segments) if window > 0 else None,
        "segments": [
            {
                "index": index,
                "label": segment.label,
                "time": format_seconds(segment.seconds),
                "share": f"{100 * segment.seconds / window:.0f}%" if window > 0 else "-",
            }
            for index, segment in enumerate(segments)
        ],
        "window": format_seconds(window),
        "ops": [{"op": op, "source": display_location(op.source) or ""} for op in summary.top_ops],
    }
