"""Charts as inline SVG, drawn here rather than by a vendored plotting bundle.

Every chart has a ``viewBox`` (its box is known before it paints, so nothing
jumps), colours from CSS classes (so dark mode recolours it), a ``<title>`` per
mark (the hover text) and an ``aria-label`` saying what it shows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from xlacli.analysis.recompiles.phases import TimelineEdges
from xlacli.repeats import equal_runs, shown_of_run, stretches
from xlacli.units import format_seconds

MARK_WIDTH = 12
MARK_GAP = 3
TIMELINE_HEIGHT = 48
TIMELINE_SCALE = 1.6  # drawn at a fixed size: a long run scrolls rather than shrinks
CHART_WIDTH = 1000
CHART_HEIGHT = 200
CHART_PAD = 34
LABEL_DIGIT_PX = 7  # a step number's digit at the timeline's label size


@dataclass(frozen=True)
class TimelineMark:
    """One step on the timeline."""

    step: int
    kind: str  # "compiled", "fallback", "read" or "cached"
    steady_recompile: bool
    hover: str
    flags: tuple[str, ...] = ()  # "read", "fallback": also happened in a step drawn as another kind


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar."""

    label: str
    seconds: float


# A long run of equal steps is drawn as its first and last few marks and one dashed mark
# for the rest (xlacli/repeats.py): a 10,000-step loop drew 10,000 marks (a 2 MB page).
def fold_marks(
    marks: Sequence[TimelineMark], edges: TimelineEdges
) -> tuple[list[TimelineMark], TimelineEdges]:
    """Long runs of equal steps (same kind and flags, no recompile, no edge inside)
    cut to their ends and one ``folded`` mark; a repeating pattern of runs (a value
    read every 10 steps) drawn as its first and last repeat and one ``folded`` mark
    between; the edges moved to the marks' new places."""
    cuts = {at for at in (edges.loop_start, edges.warm) if at is not None}
    runs = _runs(marks, cuts)  # (start, end) of each run of equal marks
    keys = [(_kind_key(marks[start]), end - start) for start, end in runs]
    breaks = {index for index, (start, _end) in enumerate(runs) if start in cuts}
    shown: list[TimelineMark] = []
    place: dict[int, int] = {}  # a kept mark's index -> its index in ``shown``

    def keep(indices: range) -> None:
        for index in indices:
            place[index] = len(shown)
            shown.append(marks[index])

    def draw_run(start: int, end: int) -> None:
        head, tail = shown_of_run(start, end)
        keep(head)
        if tail:
            first, last = marks[head.stop], marks[tail.start - 1]
            hover = f"{tail.start - head.stop:,} more {first.kind} steps like the ones beside them"
            shown.append(_folded(first, last, hover))
            keep(tail)

    for stretch in stretches(keys, breaks=breaks):
        block = runs[stretch.start : stretch.end]
        if stretch.repeats == 1:
            draw_run(*block[0])
            continue
        period = stretch.period
        for start, end in block[:period]:  # the first repeat
            draw_run(start, end)
        hidden = block[period:-period]
        if hidden:
            steps = block[period - 1][1] - block[0][0]
            pattern = ", ".join(
                f"{end - start} {marks[start].kind}" for start, end in block[:period]
            )
            hover = f"{len(hidden) // period:,} more repeats of the {steps} steps before: {pattern}"
            shown.append(_folded(marks[hidden[0][0]], marks[hidden[-1][1] - 1], hover))
        for start, end in block[-period:]:  # the last repeat
            draw_run(start, end)

    def moved(at: int | None) -> int | None:
        return None if at is None else place.get(at, at)

    return shown, TimelineEdges(loop_start=moved(edges.loop_start), warm=moved(edges.warm))


def _runs(marks: Sequence[TimelineMark], cuts: set[int]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of equal marks; a recompile or an edge starts its own."""
    steady = {index for index, mark in enumerate(marks) if mark.steady_recompile}
    return equal_runs([_kind_key(mark) for mark in marks], cuts | steady | {i + 1 for i in steady})


def _kind_key(mark: TimelineMark) -> tuple[object, ...]:
    return (mark.kind, mark.flags, mark.steady_recompile)


def _folded(first: TimelineMark, last: TimelineMark, what: str) -> TimelineMark:
    return TimelineMark(first.step, "folded", False, f"steps {first.step}-{last.step}: {what}")


def timeline_svg(marks: Sequence[TimelineMark], edges: TimelineEdges | None = None) -> Markup:
    """One mark per step (long runs of equal steps folded, ``fold_marks``); the
    loop's start after setup syncs and the end of its warm-up as lines (``edges``:
    indices into ``marks``)."""
    steps = len(marks)
    marks, edges = fold_marks(marks, edges or TimelineEdges(loop_start=None, warm=None))
    pitch = MARK_WIDTH + MARK_GAP
    # Step numbers stay legible: one every few marks when there are many or they are long.
    digits = max((len(str(mark.step)) for mark in marks), default=1)
    every = max(1 if len(marks) <= 60 else 5, math.ceil(digits * LABEL_DIGIT_PX / pitch))
    width = max(pitch * len(marks), pitch) + digits * LABEL_DIGIT_PX // 2  # the last label
    parts = [
        f'<svg class="timeline" viewBox="0 0 {width} {TIMELINE_HEIGHT}" '
        f'width="{width * TIMELINE_SCALE:.0f}" height="{TIMELINE_HEIGHT * TIMELINE_SCALE:.0f}" '
        f'role="img" '
        f'aria-label="{steps} steps, one mark per step'
        + (", long runs of equal steps folded" if len(marks) < steps else "")
        + '">'
    ]
    for index, mark in enumerate(marks):
        x = index * pitch
        steady = " steady" if mark.steady_recompile else ""
        parts.append(
            f'<g class="mark {mark.kind}{steady}" data-step="{mark.step}" data-kind="{mark.kind}">'
            f"<title>{escape(mark.hover)}</title>"
            f'<rect x="{x}" y="4" width="{MARK_WIDTH}" height="24" rx="2"></rect>'
        )
        for offset, flag in enumerate(mark.flags):
            parts.append(
                f'<circle class="flag {flag}" cx="{x + 3 + offset * 6}" cy="33" r="2.2"></circle>'
            )
        if mark.steady_recompile:
            parts.append(
                f'<rect class="ring" x="{x - 1}" y="3" width="{MARK_WIDTH + 2}" '
                'height="26" rx="3"></rect>'
            )
        parts.append("</g>")
        if mark.kind == "folded":
            parts.append(f'<text x="{x + MARK_WIDTH / 2}" y="44">…</text>')
        elif index % every == 0:
            parts.append(f'<text x="{x + MARK_WIDTH / 2}" y="44">{mark.step}</text>')
    for css, at in (("setup-edge", edges.loop_start), ("boundary", edges.warm)):
        if at:
            edge = at * pitch - MARK_GAP / 2
            parts.append(f'<line class="{css}" x1="{edge}" y1="0" x2="{edge}" y2="32"></line>')
    parts.append("</svg>")
    return Markup("".join(parts))


def step_time_svg(times_s: Sequence[float], p50: float, p90: float) -> Markup:
    """Bars of each profiled step's time, with the p50 and p90 lines."""
    top = max([*times_s, p90, 1e-9]) * 1.1
    plot_w, plot_h = CHART_WIDTH - CHART_PAD - 8, CHART_HEIGHT - 24
    pitch = plot_w / max(len(times_s), 1)

    def y(value: float) -> float:
        return round(plot_h - plot_h * value / top + 6, 1)

    parts = [
        f'<svg class="chart" viewBox="0 0 {CHART_WIDTH} {CHART_HEIGHT}" role="img" '
        f'aria-label="time of each of {len(times_s)} profiled steps; '
        f'p50 {format_seconds(p50)}, p90 {format_seconds(p90)}">',
        f'<text class="axis" x="0" y="12">{escape(format_seconds(top))}</text>',
        f'<line class="axis" x1="{CHART_PAD}" y1="{y(0)}" x2="{CHART_WIDTH}" y2="{y(0)}"></line>',
    ]
    for index, value in enumerate(times_s):
        x = CHART_PAD + index * pitch
        parts.append(
            f'<rect class="bar" x="{x + pitch * 0.1:.1f}" y="{y(value)}" '
            f'width="{max(pitch * 0.8, 1):.1f}" height="{max(y(0) - y(value), 0.5):.1f}">'
            f"<title>step {index}: {escape(format_seconds(value))}</title></rect>"
        )
    for name, value in (("p50", p50), ("p90", p90)):
        parts.append(
            f'<line class="{name}" x1="{CHART_PAD}" y1="{y(value)}" x2="{CHART_WIDTH}" '
            f'y2="{y(value)}"></line><text class="{name}" x="0" y="{y(value) + 4}">{name}</text>'
        )
    parts.append(
        f'<text class="axis" x="{CHART_PAD}" y="{CHART_HEIGHT - 2}">profiled steps →</text></svg>'
    )
    return Markup("".join(parts))


def stacked_bar_svg(segments: Sequence[Segment]) -> Markup:
    """One horizontal bar split by share of the total; class ``seg-N`` colours part N."""
    total = sum(segment.seconds for segment in segments) or 1.0
    parts = [
        f'<svg class="stacked" viewBox="0 0 {CHART_WIDTH} 28" preserveAspectRatio="none" '
        'role="img" aria-label="where the time goes, as shares of the window">'
    ]
    x = 0.0
    for index, segment in enumerate(segments):
        width = CHART_WIDTH * segment.seconds / total
        share = 100 * segment.seconds / total
        parts.append(
            f'<rect class="seg-{index}" x="{x:.2f}" y="0" width="{width:.2f}" height="28">'
            f"<title>{escape(segment.label)}: {escape(format_seconds(segment.seconds))} "
            f"({share:.0f}%)</title></rect>"
        )
        x += width
    parts.append("</svg>")
    return Markup("".join(parts))
