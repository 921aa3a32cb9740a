"""Where the profiled steps spent their time, from the trace and the run's HLO.

Step times are the intervals between the starts of consecutive ``StepTrace``
annotations (execution is asynchronous: a step's host work ends before its
graph has run); the last step ends with the last event it caused. HLO op
times come from the profile plugin's ``hlo_stats`` where it has them (TPU)
and from the trace's per-op events otherwise (XLA:CPU), joined by module and
op name to the optimized HLO the run dumped.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xlacli.hlo.model import HloModule, Instruction
from xlacli.parse.trace_events import TraceEvent
from xlacli.report.profile import GraphTime, OpTime, StepTimes

COMPILE = "PjRtComputationClient::Compile"
EXECUTE = "PjRtComputationClient::ExecuteComputation"
EXECUTE_REPLICATED = "PjRtComputationClient::ExecuteReplicated"  # SPMD graphs
TO_DEVICE = "PjRtComputationClient::TransferToDevice"
FROM_DEVICE = "PjRtComputationClient::TransferFromDevice"
TRACING = "SyncTensorsGraph"  # torch_xla's lowering of the traced graph, per sync
TOP_OPS = 15


@dataclass(frozen=True)
class ProfiledStep:
    """One annotated step: its number and its start and end in the trace."""

    step: int
    start_s: float
    end_s: float


def profiled_steps(events: Sequence[TraceEvent], step_name: str) -> list[ProfiledStep]:
    """The ``StepTrace`` annotations, in order, each ending where the next starts."""
    marks = sorted(
        (e for e in events if e.name == step_name and "step_num" in e.args),
        key=lambda e: e.start_s,
    )
    last_end = max((e.end_s for e in events), default=0.0)
    steps = []
    for index, mark in enumerate(marks):
        end = marks[index + 1].start_s if index + 1 < len(marks) else max(mark.end_s, last_end)
        steps.append(ProfiledStep(int(mark.args["step_num"]), mark.start_s, end))
    return steps


def step_times(steps: Sequence[ProfiledStep]) -> StepTimes | None:
    """Median, 90th percentile, max and mean of the step durations."""
    durations = sorted(step.end_s - step.start_s for step in steps)
    if not durations:
        return None
    p90 = durations[min(len(durations) - 1, round(0.9 * (len(durations) - 1)))]
    return StepTimes(
        p50=statistics.median(durations),
        p90=p90,
        max=durations[-1],
        mean=statistics.fmean(durations),
    )


def breakdown(events: Sequence[TraceEvent], steps: Sequence[ProfiledStep]) -> dict[str, float]:
    """Seconds of each kind of work in the profiled window.

    Host work (compile, tracing, transfers, Python) adds up to the steps'
    host time; ``execute_s`` is the device running the graphs (the HLO ops
    where the trace has them, else the execute calls), which overlaps the
    host's work on the next step. ``python_s`` is the host's step time left
    after tracing, transfers and compiles: the user's Python and the
    framework around it.
    """
    if not steps:
        return {}
    start, end = steps[0].start_s, steps[-1].end_s
    inside = [e for e in events if start <= e.start_s <= end]

    def total(name: str) -> float:
        return sum(e.duration_s for e in inside if e.name == name)

    compile_s = total(COMPILE)
    tracing_s = max(0.0, total(TRACING) - compile_s)
    to_device_s, from_device_s = total(TO_DEVICE), total(FROM_DEVICE)
    host_s = sum(e.duration_s for e in inside if e.args.get("step_num") is not None)
    device_ops_s = sum(e.duration_s for e in inside if "hlo_op" in e.args)
    return {
        "window_s": end - start,
        "compile_s": compile_s,
        "execute_s": device_ops_s or total(EXECUTE) + total(EXECUTE_REPLICATED),
        "execute_calls_s": total(EXECUTE) + total(EXECUTE_REPLICATED),
        "host_to_device_s": to_device_s,
        "device_to_host_s": from_device_s,
        "tracing_s": tracing_s,
        "python_s": max(0.0, host_s - tracing_s - compile_s - to_device_s - from_device_s),
    }


@dataclass(frozen=True)
class CompiledModule:
    """An optimized HLO module of the run, with the graph it belongs to."""

    graph_hash: str
    module: HloModule
    executed_in_window: bool


def op_times_from_trace(events: Iterable[TraceEvent]) -> list[tuple[str, str, float, int]]:
    """``(module, op, seconds, count)`` of each HLO op event in the trace."""
    totals: dict[tuple[str, str], list[float]] = {}
    for event in events:
        op = event.args.get("hlo_op")
        if op:
            key = (str(event.args.get("hlo_module", "")), str(op))
            totals.setdefault(key, []).append(event.duration_s)
    return [(module, op, sum(times), len(times)) for (module, op), times in totals.items()]


def op_times_from_hlo_stats(rows: Iterable[dict[str, object]]) -> list[tuple[str, str, float, int]]:
    """The same from the plugin's ``hlo_stats`` table (times in microseconds)."""
    result = []
    for row in rows:
        name = row.get("hlo_op_name")
        if name:
            time_us = float(row.get("total_time") or 0.0)  # type: ignore[arg-type]
            count = int(row.get("occurrences") or 0)  # type: ignore[call-overload]
            result.append(("", str(name), time_us / 1e6, count))
    return result


def top_ops(
    op_times: Iterable[tuple[str, str, float, int]],
    modules: Sequence[CompiledModule],
    limit: int = TOP_OPS,
) -> tuple[OpTime, ...]:
    """The ``limit`` most expensive ops, each with its kind and source line."""
    rows = []
    for module_name, op, seconds, count in sorted(op_times, key=lambda row: -row[2])[:limit]:
        found = _find_instruction(module_name, op, modules)
        kind, source, graph_hash = "", None, None
        if found is not None:
            graph_hash, instruction = found
            kind = instruction.fusion_kind or instruction.opcode
            metadata = instruction.metadata
            if metadata.source_file:
                source = f"{metadata.source_file}:{metadata.source_line}"
        rows.append(OpTime(op, seconds, count, kind, source, graph_hash, module_name))
    return tuple(rows)


def _find_instruction(
    module_name: str, op: str, modules: Sequence[CompiledModule]
) -> tuple[str, Instruction] | None:
    """The instruction an op event names: modules run in the window first."""
    candidates = sorted(
        (m for m in modules if not module_name or m.module.name == module_name),
        key=lambda m: not m.executed_in_window,
    )
    for candidate in candidates:
        for computation in candidate.module.computations:
            for instruction in computation.instructions:
                if instruction.name == op:
                    return candidate.graph_hash, instruction
    return None


def graph_times(
    executions: Iterable[tuple[str | None, float | None]],
    site_of: Callable[[str], str | None],
) -> tuple[GraphTime, ...]:
    """Executions and execution time per graph hash, most expensive first."""
    totals: dict[str, list[float]] = {}
    for graph_hash, seconds in executions:
        if graph_hash:
            totals.setdefault(graph_hash, []).append(seconds or 0.0)
    return tuple(
        GraphTime(graph_hash, site_of(graph_hash), len(times), sum(times))
        for graph_hash, times in sorted(totals.items(), key=lambda item: -sum(item[1]))
    )


def batch_size(input_signature: Sequence[str]) -> int | None:
    """The first dimension of the first input tensor: ``input 0 f32[8,64]`` -> 8."""
    for entry in input_signature:
        _, _, xla_type = entry.rpartition(" ")
        if "[" in xla_type:
            dims = xla_type.split("[", 1)[1].rstrip("]")
            first = dims.split(",")[0]
            return int(first) if first.isdigit() else None
    return None
