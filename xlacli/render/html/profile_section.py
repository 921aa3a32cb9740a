"""Context of a profiled run's section: step times, where the time goes, top ops."""

from __future__ import annotations

from typing import Any

from xlacli.paths import display_location
from xlacli.render.html.context import RunContext
from xlacli.render.html.svg import Segment, stacked_bar_svg, step_time_svg
from xlacli.render.profile import BREAKDOWN_LABELS, device_line, op_line
from xlacli.report.profile import OpTime
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
        "device": device_line(summary.breakdown).plain if window > 0 else None,
        "ops": [{"op": op, "source": op_line(op) + _pass_note(op)} for op in summary.top_ops],
        "lines": [
            {
                "line": display_location(line.line),
                "time": line.time_s,
                "forward": line.forward_s,
                "backward": line.backward_s,
                "optimizer": line.optimizer_s,
            }
            for line in summary.lines
        ],
        "optimizer_column": any(line.optimizer_s for line in summary.lines),
        "line_share": f"{summary.line_share:.0%}" if summary.line_share is not None else None,
    }


def _pass_note(op: OpTime) -> str:
    """After the op's line: which pass made it, when not the forward one."""
    return " (backward)" if op.backward else " (optimizer)" if op.optimizer else ""
