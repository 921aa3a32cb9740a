"""Stage 1 of the assembler: a run folder's raw artifacts, parsed (each by its
parser in ``parse/``); ``organise.py`` joins them by order (see there why)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from xlacli.parse.debug_log import AnalysisEvent, parse_debug_log
from xlacli.parse.eager_ops import merge_eager_events
from xlacli.parse.execute_times import device_times
from xlacli.parse.ir_dump import IrGraph, parse_ir_dump
from xlacli.parse.metrics_report import parse_metrics_report
from xlacli.parse.xla_dump import DumpedModule, list_dumped_modules, prune_backend_noise
from xlacli.run_folder.events import ChildLog
from xlacli.run_folder.request import RunPaths
from xlacli.run_folder.step_events import Measures

# A graph runs through ExecuteComputation, or ExecuteReplicated under SPMD.
_EXECUTION_COUNTERS = ("ExecuteComputation", "ExecuteReplicated")


@dataclass(frozen=True)
class RawRun:
    """Everything parsed from a run folder, before it becomes a report."""

    log: ChildLog
    compiles: list[AnalysisEvent]
    executions: list[AnalysisEvent]
    ir_graphs: list[IrGraph]
    modules: list[DumpedModule]
    counters: dict[str, int]
    # One per compile (execution); None: not timed (an eager op's graph). An
    # execution's time is its own on the device (``parse/execute_times.py``).
    compile_times_s: list[float | None] = field(default_factory=list)
    execute_times_s: list[float | None] = field(default_factory=list)


def read_raw_run(
    paths: RunPaths, log: ChildLog, ir_blocks: Mapping[str, IrGraph] | None = None
) -> RawRun:
    """Parse the raw artifacts of a run folder (``ir_blocks``: the IR dump's
    blocks parsed while the child ran, by their text)."""
    events = parse_debug_log(_read(paths.debug_log))
    ir_dump = paths.ir_dump_files()
    prune_backend_noise(paths.xla_dump)
    metrics = parse_metrics_report(_read(paths.metrics))
    counters = dict(metrics.counters) or _summed_counters(log)
    ir_graphs = parse_ir_dump(_read(ir_dump[0]), ir_blocks) if ir_dump else []
    compiles, compile_times = _with_eager_ops(
        "compile",
        [e for e in events if e.kind == "compile"],
        _samples_s(log, lambda m: m.compile_time_ns),
        ir_graphs,
        counters.get("UncachedCompile", 0),
    )
    executions, execute_times = _with_eager_ops(
        "execute",
        [e for e in events if e.kind == "execute"],
        _execute_times_s(log),
        ir_graphs,
        sum(counters.get(name, 0) for name in _EXECUTION_COUNTERS),
    )
    return RawRun(
        log=log,
        compiles=compiles,
        executions=executions,
        ir_graphs=ir_graphs,
        modules=list_dumped_modules(paths.xla_dump),
        counters=counters,
        compile_times_s=compile_times,
        execute_times_s=execute_times,
    )


def _with_eager_ops(
    kind: str,
    logged: list[AnalysisEvent],
    samples: list[float],
    ir_graphs: list[IrGraph],
    counted: int,
) -> tuple[list[AnalysisEvent], list[float | None]]:
    """The debug log's events with eager mode's op graphs (not logged, not
    timed) in their places (``parse/eager_ops.py``); unchanged when there are none."""
    merged = merge_eager_events(logged, ir_graphs, kind, counted)
    if merged is None:
        return logged, list(samples)
    return list(merged.events), merged.aligned(samples)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return ""


def _samples_s(log: ChildLog, samples: Callable[[Measures], Iterable[float]]) -> list[float]:
    """Each compile's (or execution's) time, in order, as ``samples`` reads an event's."""
    return [ns / 1e9 for event in log.metric_events for ns in samples(event.measures)]


def _execute_times_s(log: ChildLog) -> list[float]:
    """Each execution's own time on the device, in order: its ``ExecuteTime``
    sample less the time it waited behind the executions before it. A run
    folder whose child kept no sample ends (an older xlacli) keeps the samples."""
    # An event's held samples (``child/metric_deltas.py``: earlier steps' times read
    # with this one's) come before its own.
    durations = _samples_s(log, lambda m: (*m.execute_time_ns_held, *m.execute_time_ns))
    ends = [
        end
        for event in log.metric_events
        for end in (*event.measures.execute_end_s_held, *event.measures.execute_end_s)
    ]
    if len(ends) != len(durations):
        return durations
    return device_times(durations, ends)


def _summed_counters(log: ChildLog) -> dict[str, int]:
    """Counters from the per-step deltas, when the final report was never written."""
    totals: dict[str, int] = {}
    for event in log.metric_events:
        for name, delta in event.measures.counters.items():
            totals[name] = totals.get(name, 0) + delta
    return totals
