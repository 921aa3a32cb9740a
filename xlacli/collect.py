"""Raw artifacts of a run folder -> a ``RunReport``.

torch_xla and XLA describe each compile in three places that share no key but
their order: the debug log's "Compilation Analysis" blocks (graph hash,
frames), the ``CompileTime`` metric's samples (seconds), and the XLA dump's
modules (numbered in compile order). Executions likewise pair the debug log's
"Execution Analysis" blocks with ``ExecuteTime`` samples. The child records
counter deltas per step, which places every compile and execution in its step.
"""

from __future__ import annotations

import shutil
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xlacli.capture.events import ChildLog
from xlacli.capture.request import CaptureRequest, RunPaths
from xlacli.parse.buffer_assignment import parse_buffer_assignment, summarize_buffers
from xlacli.parse.debug_log import AnalysisEvent, parse_debug_log
from xlacli.parse.frames import CodeRoots, Frame, current_code_roots, first_user_frame
from xlacli.parse.ir_dump import IrGraph, parse_ir_dump
from xlacli.parse.metrics_report import parse_metrics_report
from xlacli.parse.xla_dump import DumpedModule, list_dumped_modules, prune_backend_noise
from xlacli.paths import display_path
from xlacli.report import ErrorRecord, GraphRecord, RunReport, StepRecord

GRAPH_FILE_NAMES = {
    "ir": "ir.txt",
    "hlo_before": "hlo.before.txt",
    "hlo_after": "hlo.after.txt",
    "buffer_assignment": "buffer-assignment.txt",
    "memory_usage": "memory-usage.txt",
}
HOST_SYNC_CAUSE = "access tensor value"


@dataclass(frozen=True)
class RawRun:
    """Everything parsed from a run folder, before it becomes a report."""

    log: ChildLog
    compiles: list[AnalysisEvent]
    executions: list[AnalysisEvent]
    ir_graphs: list[IrGraph]
    modules: list[DumpedModule]
    counters: dict[str, int]
    compile_times_s: list[float] = field(default_factory=list)
    execute_times_s: list[float] = field(default_factory=list)


def read_raw_run(paths: RunPaths, log: ChildLog) -> RawRun:
    """Parse the raw artifacts of a run folder."""
    events = parse_debug_log(_read(paths.debug_log))
    ir_dump = paths.ir_dump_files()
    prune_backend_noise(paths.xla_dump)
    metrics = parse_metrics_report(_read(paths.metrics))
    counters = dict(metrics.counters) or _summed_counters(log)
    return RawRun(
        log=log,
        compiles=[e for e in events if e.kind == "compile"],
        executions=[e for e in events if e.kind == "execute"],
        ir_graphs=parse_ir_dump(_read(ir_dump[0])) if ir_dump else [],
        modules=list_dumped_modules(paths.xla_dump),
        counters=counters,
        compile_times_s=_samples_s(log, "compile_time_ns"),
        execute_times_s=_samples_s(log, "execute_time_ns"),
    )


def build_report(
    raw: RawRun,
    paths: RunPaths,
    request: CaptureRequest,
    model_label: str,
    error: ErrorRecord | None,
    roots: CodeRoots | None = None,
) -> RunReport:
    """Assemble the report, moving each graph's kept files into ``graphs/<hash>/``."""
    roots = roots or current_code_roots()
    entry_site = (raw.log.setup or {}).get("entry_site")
    compile_steps = _event_steps(raw.log, "UncachedCompile", len(raw.compiles))
    execute_steps = _event_steps(raw.log, "ExecuteComputation", len(raw.executions))
    graphs = []
    for graph_hash, indices in _group_by_hash(raw.compiles).items():
        first = indices[0]
        exec_indices = [i for i, e in enumerate(raw.executions) if e.graph_hash == graph_hash]
        exec_times = [raw.execute_times_s[i] for i in exec_indices if i < len(raw.execute_times_s)]
        files = _organize_graph_files(paths, graph_hash, raw, first)
        trigger, site = _site(raw.compiles[first], roots, entry_site)
        graphs.append(
            GraphRecord(
                hash=graph_hash,
                site=site,
                trigger=trigger,
                frames=tuple(str(f) for f in raw.compiles[first].frames),
                ir_nodes=_ir_nodes(raw.ir_graphs, graph_hash),
                compilations=len(indices),
                compile_time_s=sum(_at(raw.compile_times_s, i) for i in indices),
                executions=len(exec_indices),
                execute_time_s=statistics.median(exec_times) if exec_times else None,
                total_execute_time_s=sum(exec_times),
                first_step=compile_steps[first],
                files=files,
                **_graph_sizes(paths.root, files),
            )
        )
    return RunReport(
        model=model_label,
        device=(raw.log.start or {}).get("device", "unknown"),
        steps=len(raw.log.steps),
        steps_requested=request.steps,
        train=request.train,
        run_dir=str(paths.root),
        compilations=len(raw.compiles),
        executions=len(raw.executions),
        total_compile_time_s=sum(raw.compile_times_s),
        total_execute_time_s=sum(raw.execute_times_s),
        graphs=tuple(graphs),
        step_records=_step_records(raw.log, compile_steps, execute_steps),
        counters=raw.counters,
        versions=dict((raw.log.start or {}).get("versions", {})),
        error=error,
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, IsADirectoryError):
        return ""


def _samples_s(log: ChildLog, key: str) -> list[float]:
    return [ns / 1e9 for event in log.metric_events for ns in event.get(key, [])]


def _summed_counters(log: ChildLog) -> dict[str, int]:
    """Counters from the per-step deltas, when the final report was never written."""
    totals: dict[str, int] = {}
    for event in log.metric_events:
        for name, delta in event.get("counters", {}).items():
            totals[name] = totals.get(name, 0) + delta
    return totals


def _event_steps(log: ChildLog, counter: str, count: int) -> list[int | None]:
    """The step of each compile (or execution), in order; None outside steps."""
    steps: list[int | None] = []
    for event in log.metric_events:
        step = event.get("step")
        steps.extend([step] * event.get("counters", {}).get(counter, 0))
    # Events past the last recorded delta (the child died mid-step) belong to
    # the step that was running.
    running = len(log.steps)
    steps.extend([running] * (count - len(steps)))
    return steps[:count]


def _group_by_hash(compiles: Sequence[AnalysisEvent]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for index, event in enumerate(compiles):
        groups.setdefault(event.graph_hash or f"unknown-{index}", []).append(index)
    return groups


def _at(values: Sequence[float], index: int) -> float:
    return values[index] if index < len(values) else 0.0


def _site(event: AnalysisEvent, roots: CodeRoots, entry_site: str | None) -> tuple[str, str | None]:
    """Why the graph ran and the user's ``file:line`` behind it."""
    user = first_user_frame(event.frames, roots)
    if user is not None:
        trigger = "host_sync" if HOST_SYNC_CAUSE in event.cause else "user_sync"
        return trigger, _display_location(user)
    if any(roots.is_xlacli(frame) for frame in event.frames):
        return "step_end", _display_site(entry_site)
    return "other", None


def _display_location(frame: Frame) -> str:
    return f"{display_path(frame.file)}:{frame.line}"


def _display_site(site: str | None) -> str | None:
    if not site:
        return None
    file, _, line = site.rpartition(":")
    return f"{display_path(file)}:{line}"


def _ir_nodes(ir_graphs: Sequence[IrGraph], graph_hash: str) -> int:
    graph = next((g for g in ir_graphs if g.graph_hash == graph_hash), None)
    return len(graph.nodes) if graph else 0


def _organize_graph_files(
    paths: RunPaths, graph_hash: str, raw: RawRun, compile_index: int
) -> dict[str, str]:
    """Move the first compile's dump files (and write its IR) under ``graphs/<hash>/``."""
    folder = paths.graphs / graph_hash
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    ir_graph = next((g for g in raw.ir_graphs if g.graph_hash == graph_hash), None)
    if ir_graph is not None:
        (folder / GRAPH_FILE_NAMES["ir"]).write_text(_ir_file_text(ir_graph), encoding="utf-8")
        files["ir"] = f"graphs/{graph_hash}/{GRAPH_FILE_NAMES['ir']}"
    module = raw.modules[compile_index] if compile_index < len(raw.modules) else None
    for role, source in (module.files.items() if module else ()):
        target = folder / GRAPH_FILE_NAMES[role]
        if source.exists():
            shutil.move(str(source), target)
        if target.exists():
            files[role] = f"graphs/{graph_hash}/{GRAPH_FILE_NAMES[role]}"
    return dict(sorted(files.items()))


def _ir_file_text(graph: IrGraph) -> str:
    frames = "".join(f"  {frame}\n" for frame in graph.frames)
    return f"Frames:\n{frames}\nGraph Hash: {graph.graph_hash}\n\n{graph.ir_text}\n"


def _graph_sizes(root: Path, files: dict[str, str]) -> dict[str, int | None]:
    sizes: dict[str, int | None] = dict.fromkeys(
        ("input_bytes", "output_bytes", "temp_bytes", "hlo_instructions",
         "optimized_hlo_instructions", "fusions")
    )
    if "buffer_assignment" in files:
        summary = summarize_buffers(
            parse_buffer_assignment(_read(root / files["buffer_assignment"]))
        )
        sizes.update(
            input_bytes=summary.input_bytes,
            output_bytes=summary.output_bytes,
            temp_bytes=summary.temp_bytes,
        )
    sizes.update(_hlo_counts(root, files))
    return sizes


def _hlo_counts(root: Path, files: dict[str, str]) -> dict[str, int | None]:
    from xlacli.hlo import parse_hlo_file

    counts: dict[str, int | None] = {}
    if "hlo_before" in files:
        counts["hlo_instructions"] = parse_hlo_file(root / files["hlo_before"]).instruction_count
    if "hlo_after" in files:
        optimized = parse_hlo_file(root / files["hlo_after"])
        counts["optimized_hlo_instructions"] = optimized.instruction_count
        counts["fusions"] = optimized.opcode_counts()["fusion"]
    return counts


def _step_records(
    log: ChildLog, compile_steps: list[int | None], execute_steps: list[int | None]
) -> tuple[StepRecord, ...]:
    return tuple(
        StepRecord(
            step=event["step"],
            wall_time_s=event.get("wall_time_s", 0.0),
            compilations=compile_steps.count(event["step"]),
            executions=execute_steps.count(event["step"]),
            input_signature=tuple(event.get("input_signature", ())),
        )
        for event in log.steps
    )
