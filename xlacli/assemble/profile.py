"""The profile summary, assembled from a profiled run: the trace's steps and ops
joined to the report's graphs and the child's step events (what ``xlacli
profile`` prints and saves)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from xlacli.analysis.dynamo.record import dynamo_window_note
from xlacli.analysis.profile.host_split import host_split, op_tracing_s, tracing_note
from xlacli.analysis.profile.host_timeline import host_timeline
from xlacli.analysis.profile.op_lines import finder_for, lines_by_time
from xlacli.analysis.profile.summary import (
    CompiledModule,
    InstructionIndex,
    ProfiledStep,
    attribute_ops,
    batch_size,
    graph_times,
    op_times_from_hlo_stats,
    op_times_from_trace,
    profiled_steps,
    step_times,
    top_ops,
)
from xlacli.analysis.recompiles.phases import OTHER, SETUP, script_step_phases
from xlacli.assemble.graph_files import HloCache
from xlacli.assemble.organise import execution_records
from xlacli.assemble.read import RawRun
from xlacli.parse.frames import current_code_roots
from xlacli.parse.trace_events import TraceEvent, read_trace_file
from xlacli.parse.xprof_tools import table_rows, tool_data, xprof_available
from xlacli.paths import display_path
from xlacli.report.profile import LineTime, OpTime, ProfileSummary
from xlacli.report.run_report import GraphRecord, RunReport
from xlacli.run_folder.events import STEP_TRACE_NAME, ChildLog, TraceMark
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.step_events import Measures
from xlacli.units import counted

T = TypeVar("T")


def summarize_profile(
    raw: RawRun, report: RunReport, hlo: HloCache | None = None
) -> ProfileSummary:
    """The summary of the profiled steps that completed.

    ``hlo``: the graphs' HLO as the report's assembly parsed it, read again here.
    """
    trace = raw.log.trace or TraceMark()
    files = tuple(trace.files)
    stood_aside = trace.stood_aside
    notes: list[str] = []
    events = _trace_events(files, notes) if files or not stood_aside else []
    completed = {e.step for e in raw.log.steps if e.measures.traced and e.step is not None}
    steps = [s for s in profiled_steps(events, STEP_TRACE_NAME) if s.step in completed]
    traced_events = [e for e in raw.log.steps if e.step in completed]
    timeline = host_timeline(events, steps, STEP_TRACE_NAME, op_tracing_s(traced_events))
    op_times, op_source = _op_times(files, events, Path(report.run_dir), notes)
    op_times = _per_device(op_times, report, notes)
    executions = _window(execution_records(raw), raw.log, lambda mark: mark.executions)
    clocked = bool(stood_aside) and not steps  # no trace: the child's own step clock
    durations = _durations(steps, raw.log, report.warmup if clocked else None)
    if clocked:  # no window: the loop's steps the child clocked after its warm-up
        ran = {step.step for step in durations}
        executions = [r for r in execution_records(raw) if r.step in ran]
    if stood_aside:
        notes.append(_stood_aside_note(stood_aside, clocked))
    graphs = {g.hash: g for g in report.graphs}
    hlo = hlo or HloCache(Path(report.run_dir))
    executed = {r.graph_hash for r in executions}
    ops, lines, line_share = _ops_at_lines(report, hlo, op_times, executed)
    window_compiles = len(_window(list(report.events), raw.log, lambda mark: mark.compilations))
    notes.extend(_window_notes(report, window_compiles, completed))
    split = host_split(traced_events, timeline)
    both = _both_command(report, len(completed))
    times = step_times(durations)
    first_traced = next((e.measures for e in raw.log.steps if e.measures.traced), Measures())
    batch = batch_size(first_traced.input_signature)
    session_dir = trace.session_dir or ""
    return ProfileSummary(
        model=report.model,
        device=report.device,
        steps=len(durations),
        warmup=report.warmup if clocked else _warmup_steps(raw.log),
        step_times_s=tuple(step.duration_s for step in durations),
        step_time_s=times,
        batch_size=batch,
        samples_per_s=batch / times.p50 if batch and times and times.p50 > 0 else None,
        breakdown=timeline,
        top_ops=ops,
        graphs=graph_times(((r.graph_hash, r.time_s) for r in executions), _site_of(graphs)),
        window_compiles=window_compiles,
        trace_files=files,
        logdir=str(Path(session_dir).parents[2]) if session_dir else "",
        session=Path(session_dir).name if session_dir else "",
        run_dir=report.run_dir,
        source_of_op_times=op_source,
        notes=tuple(notes),
        interrupted=report.error is not None and report.error.kind == "interrupted",
        host_split=split,
        tracing_advice=tracing_note(split, report.mode, both),
        compare_command=both,
        mode=report.mode,
        lines=lines,
        line_share=line_share if op_times else None,
        stood_aside=stood_aside,
    )


def _ops_at_lines(
    report: RunReport,
    hlo: HloCache,
    op_times: list[tuple[str, str, float, int]],
    executed: set[str | None],
) -> tuple[tuple[OpTime, ...], tuple[LineTime, ...], float]:
    """The top ops, each at its user line, and device time by user line."""
    graphs = {g.hash: g for g in report.graphs}
    modules = [
        CompiledModule(graph.hash, module, graph.hash in executed)
        for graph in graphs.values()
        if (module := hlo.module(graph.files.get("hlo_after"))) is not None
    ]
    find_line = finder_for(
        {m.graph_hash: m.module for m in modules},
        lambda h: hlo.stacks(graphs[h].files.get("hlo_after_stacks")),
        current_code_roots(),
    )
    index = InstructionIndex(modules)
    lines, share = lines_by_time(attribute_ops(op_times, index, find_line))
    return top_ops(op_times, index, find_line), lines, share


def _window_notes(report: RunReport, window_compiles: int, completed: set[int]) -> list[str]:
    """Warnings about the window: compiles inside it, torch.compile retracing."""
    notes: list[str] = []
    if window_compiles:
        notes.append(
            f"{counted(window_compiles, 'compile')} happened inside the "
            "profiled window: the warm-up was too short or the model recompiles; "
            f"each one explained: {_command(report.model, 'compile', report.options)}"
        )
    dynamo_note = dynamo_window_note(report.dynamo, completed)  # torch.compile retraces
    if dynamo_note:
        notes.append(dynamo_note)
    return notes


def _durations(steps: list[ProfiledStep], log: ChildLog, warmup: int | None) -> list[ProfiledStep]:
    """The traced steps; without a trace (``warmup`` given), the loop's steps after
    its warm-up as the child timed them (a script's setup syncs are not steps)."""
    if warmup is None:
        return steps
    phases = script_step_phases(log.steps)
    loop = [e for e in log.steps if phases.get(e.step or 0) not in (SETUP, OTHER)]
    return [
        ProfiledStep(e.step or 0, 0.0, float(e.wall_time_s)) for e in loop[warmup:] if e.wall_time_s
    ]


def _site_of(graphs: dict[str, GraphRecord]) -> Callable[[str], str | None]:
    return lambda graph_hash: graphs[graph_hash].site if graph_hash in graphs else None


def _stood_aside_note(call: str, clocked: bool) -> str:
    what = (
        "traced nothing; the step times are the child's clock"
        if clocked
        else "stopped its trace there; the summary covers the steps traced before"
    )
    return (
        f"the script runs torch_xla's profiler itself ({call}): it allows one session at a "
        f"time, so xlacli stood aside and {what}; the script's own trace is in the logdir "
        "it chose"
    )


def _command(model: str, command: str, options: tuple[str, ...], *extra: str) -> str:
    """An xlacli command as a user types it, with the run's own options (a
    script's arguments stay last, after ``--``)."""
    target = model.split() if model.startswith("-m ") else [display_path(model)]
    if "--" in options:
        cut = options.index("--")
        options = (*options[:cut], *extra, *options[cut:])
    else:
        options = (*options, *extra)
    return shlex.join(["xlacli", command, *target, *options])


def _both_command(report: RunReport, steps: int) -> str | None:
    """``xlacli profile MODEL --mode both`` with the run's steps and options;
    None for a script (only a model file can be put under torch.compile by xlacli)."""
    try:
        if CaptureRequest.load(RunPaths(Path(report.run_dir)).request).is_script:
            return None
    except (OSError, ValueError, TypeError, KeyError):
        return None
    options = list(report.options)
    if "--mode" in options:  # a dynamo run: compare it too
        del options[options.index("--mode") : options.index("--mode") + 2]
    sized = ("--steps", str(max(steps, 1)), "--warmup", str(report.warmup))
    return _command(report.model, "profile", (*sized, *options), "--mode", "both")


def _warmup_steps(log: ChildLog) -> int:
    """Steps run before the first traced one (steps after a capped trace are not warm-up)."""
    traced = [e.step or 0 for e in log.steps if e.measures.traced]
    if traced:
        return min(traced)
    return sum(1 for e in log.steps if not e.measures.traced)


def _window(items: list[T], log: ChildLog, count: Callable[[TraceMark], int | None]) -> list[T]:
    """The items (compiles or executions, in run order) inside the profiled window.

    The child read the counters when the window opened and closed, with the
    device idle both times; a window cut short has no closing count.
    """
    first = count(log.trace_start) if log.trace_start else None
    if first is None:
        return []
    last = count(log.trace) if log.trace else None
    return items[first:last]


def _trace_events(files: tuple[str, ...], notes: list[str]) -> list[TraceEvent]:
    trace_json = next((Path(f) for f in files if f.endswith(".trace.json.gz")), None)
    if trace_json is None:
        notes.append("the profiler wrote no trace events")
        return []
    return read_trace_file(trace_json)


def _per_device(
    op_times: list[tuple[str, str, float, int]], report: RunReport, notes: list[str]
) -> list[tuple[str, str, float, int]]:
    """Op times on a mesh as one device's: the trace holds every device's run of
    each op, so their sum over 4 devices was 4 times a window's device time."""
    devices = max((graph.spmd.devices for graph in report.graphs if graph.spmd), default=1)
    if devices <= 1 or not op_times:
        return op_times
    notes.append(
        f"op and line times and counts are per device: each op's summed over the {devices} "
        f"devices of the mesh, divided by {devices}"
    )
    return [
        (name, module, seconds / devices, max(1, count // devices))
        for name, module, seconds, count in op_times
    ]


def _op_times(
    files: tuple[str, ...], events: list[TraceEvent], run_dir: Path, notes: list[str]
) -> tuple[list[tuple[str, str, float, int]], str]:
    """HLO op self times from the plugin's hlo_stats (device ops, TPU), else the trace."""
    xplane = next((Path(f) for f in files if f.endswith(".xplane.pb")), None)
    if xplane is not None and not xprof_available():
        notes.append(
            "tensorboard-plugin-profile is not installed: op times come from the trace events "
            "(pip install 'xlacli[profile]')"
        )
    elif xplane is not None:
        rows = table_rows(tool_data(xplane, "hlo_stats", run_dir / "xprof.log"))
        if rows:
            return op_times_from_hlo_stats(rows), "xprof hlo_stats"
    return op_times_from_trace(events), "trace events"
