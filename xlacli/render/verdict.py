"""The one line every text report opens with: what the user ran the command for.

"1 steady-state recompile: dynamic_shapes.py:36, input 0 shape s64[4,16] -> s64[4,24]",
"no recompile after warm-up (3 steady-state steps)", or why there is no verdict
(the run failed, ran no step, or every step was a warm-up step). The HTML page
and ``xlacli runs`` say the same words.
"""

from __future__ import annotations

from xlacli.paths import display_location
from xlacli.report.profile import ProfileSummary
from xlacli.report.run_report import CompileEvent, RunReport
from xlacli.units import counted, format_seconds

_DETAIL_WIDTH = 60  # characters of a cause's detail kept in the one line


def run_verdict(report: RunReport) -> str:
    """The run's verdict in one line (no markup)."""
    if report.error is not None:
        first = report.error.message.splitlines()[0] if report.error.message else ""
        return f"failed (exit {report.error.exit_code}): {first}"
    if report.steps == 0:
        return "no step ran: nothing was compiled or measured"
    steady = [event for event in report.events if event.steady_state]
    dynamo = _dynamo_steady_recompiles(report)
    if steady:
        return f"{counted(len(steady), 'steady-state recompile')}: {_event_words(steady[0])}" + (
            f" (first of {len(steady)})" if len(steady) > 1 else ""
        )
    if dynamo:
        return f"{counted(dynamo, 'Dynamo recompile')} after warm-up (guard failures)"
    steady_steps = report.steps - report.warmup
    if steady_steps <= 0:
        return (
            f"no steady-state step yet: all {counted(report.steps, 'step')} were warm-up; "
            f"run with --steps {report.warmup + 2} to see recompiles after warm-up"
        )
    return f"no recompile after warm-up ({counted(steady_steps, 'steady-state step')})" + (
        _unrolled_words(report)
    )


def _unrolled_words(report: RunReport) -> str:
    """``, but a loop unrolled into one graph: evaluate.py:15 (30 iterations)``."""
    if not report.unrolled_loops:
        return ""
    loop = max(report.unrolled_loops, key=lambda found: found.iterations)
    more = len(report.unrolled_loops) - 1
    return (
        f", but a loop unrolled into one graph: {display_location(loop.loop)} "
        f"({loop.iterations} iterations)" + (f" and {more} more" if more else "")
    )


def verdict_is_bad(report: RunReport) -> bool:
    """Whether the verdict is one the user must act on (shown in red)."""
    return (
        report.error is not None
        or any(e.steady_state for e in report.events)
        or bool(report.unrolled_loops)
    )


def _event_words(event: CompileEvent) -> str:
    where = display_location(event.cause.location) or f"step {event.step}"
    detail = event.cause.detail.splitlines()[0] if event.cause.detail else event.cause.category
    if len(detail) > _DETAIL_WIDTH:
        detail = detail[: _DETAIL_WIDTH - 1] + "…"
    return f"{where}, {detail}"


def _dynamo_steady_recompiles(report: RunReport) -> int:
    if report.dynamo is None:
        return 0
    return sum(
        1
        for frame in report.dynamo.frames
        if frame.guard_failure and frame.step is not None and frame.step >= report.warmup
    )


def profile_verdict(summary: ProfileSummary) -> str:
    """A profile's verdict: its step time, and whether anything compiled while traced."""
    if summary.step_time_s is None:
        return "no profiled step completed: no step time"
    times = summary.step_time_s
    compiles = (
        f"{counted(summary.window_compiles, 'compile')} inside the profiled window "
        "(they inflate the step time: raise --warmup)"
        if summary.window_compiles
        else "no compile inside the profiled window"
    )
    return (
        f"step time p50 {format_seconds(times.p50)} (p90 {format_seconds(times.p90)}); {compiles}"
    )
