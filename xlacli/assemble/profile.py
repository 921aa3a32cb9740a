"""The profile summary, assembled from a profiled run: the trace's steps and ops
joined to the report's graphs (what ``xlacli profile`` prints and saves)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from xlacli.analysis.dynamo import dynamo_window_note
from xlacli.analysis.host_split import host_split, tracing_note
from xlacli.analysis.profile_summary import (
    CompiledModule,
    batch_size,
    breakdown,
    graph_times,
    op_times_from_hlo_stats,
    op_times_from_trace,
    profiled_steps,
    step_times,
    top_ops,
)
from xlacli.assemble.graph_files import HloCache
from xlacli.assemble.organise import execution_records
from xlacli.assemble.read import RawRun
from xlacli.parse.trace_events import TraceEvent, read_trace_file
from xlacli.parse.xprof_tools import table_rows, tool_data, xprof_available
from xlacli.paths import display_path
from xlacli.report.profile import ProfileSummary
from xlacli.report.run import RunReport
from xlacli.run.events import STEP_TRACE_NAME, ChildLog
from xlacli.words import counted

T = TypeVar("T")


def summarize_profile(
    raw: RawRun, report: RunReport, hlo: HloCache | None = None
) -> ProfileSummary:
    """The summary of the profiled steps that completed.

    ``hlo``: the graphs' HLO as the report's assembly parsed it, read again here.
    """
    run_dir = Path(report.run_dir)
    trace = raw.log.trace or {}
    files = tuple(trace.get("files", ()))
    notes: list[str] = []
    events = _trace_events(files, notes)
    completed = {e["step"] for e in raw.log.steps if e.get("traced")}
    steps = [s for s in profiled_steps(events, STEP_TRACE_NAME) if s.step in completed]
    op_times, op_source = _op_times(files, events, run_dir, notes)
    hlo = hlo or HloCache(run_dir)
    executions = _window(execution_records(raw), raw.log, "executions")
    executed = {r.graph_hash for r in executions}
    modules = [
        CompiledModule(graph.hash, module, graph.hash in executed)
        for graph in report.graphs
        if (module := hlo.module(graph.files.get("hlo_after"))) is not None
    ]
    sites = {graph.hash: graph.site for graph in report.graphs}
    breakdown_s = breakdown(events, steps)
    window_compiles = len(_window(list(report.events), raw.log, "compilations"))
    if window_compiles:
        notes.append(
            f"{counted(window_compiles, 'compile')} happened inside the "
            "profiled window: the warm-up was too short or the model recompiles "
            "(xlacli compile explains each one)"
        )
    dynamo_note = dynamo_window_note(report.dynamo, completed)  # torch.compile retraces
    if dynamo_note:
        notes.append(dynamo_note)
    split = host_split([e for e in raw.log.steps if e.get("step") in completed], breakdown_s)
    times = step_times(steps)
    first_traced = next((e for e in raw.log.steps if e.get("traced")), {})
    batch = batch_size(first_traced.get("input_signature", ()))
    session_dir = trace.get("session_dir") or ""
    return ProfileSummary(
        model=report.model,
        device=report.device,
        steps=len(steps),
        warmup=_warmup_steps(raw.log),
        step_times_s=tuple(step.end_s - step.start_s for step in steps),
        step_time_s=times,
        batch_size=batch,
        samples_per_s=batch / times.p50 if batch and times and times.p50 > 0 else None,
        breakdown=breakdown_s,
        top_ops=top_ops(op_times, modules),
        graphs=graph_times(((r.graph_hash, r.time_s) for r in executions), sites.get),
        window_compiles=window_compiles,
        trace_files=files,
        logdir=str(Path(session_dir).parents[2]) if session_dir else "",
        session=Path(session_dir).name if session_dir else "",
        run_dir=report.run_dir,
        source_of_op_times=op_source,
        notes=tuple(notes),
        interrupted=report.error is not None and report.error.kind == "interrupted",
        host_split=split,
        tracing_advice=tracing_note(split, report.mode, display_path(report.model)),
        mode=report.mode,
    )


def _warmup_steps(log: ChildLog) -> int:
    """Steps run before the first traced one (steps after a capped trace are not warm-up)."""
    traced = [e.get("step", 0) for e in log.steps if e.get("traced")]
    if traced:
        return min(traced)
    return sum(1 for e in log.steps if not e.get("traced"))


def _window(items: list[T], log: ChildLog, counter: str) -> list[T]:
    """The items (compiles or executions, in run order) inside the profiled window.

    The child read the counters when the window opened and closed, with the
    device idle both times; a window cut short has no closing count.
    """
    first = (log.trace_start or {}).get(counter)
    if first is None:
        return []
    last = (log.trace or {}).get(counter)
    return items[first:last]


def _trace_events(files: tuple[str, ...], notes: list[str]) -> list[TraceEvent]:
    trace_json = next((Path(f) for f in files if f.endswith(".trace.json.gz")), None)
    if trace_json is None:
        notes.append("the profiler wrote no trace events")
        return []
    return read_trace_file(trace_json)


def _op_times(
    files: tuple[str, ...], events: list[TraceEvent], run_dir: Path, notes: list[str]
) -> tuple[list[tuple[str, str, float, int]], str]:
    """HLO op times from the plugin's hlo_stats (device ops, TPU), else the trace."""
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
