"""Where the profiled steps spent their time, from the trace and the run's HLO.

Step times are the ``StepTrace`` annotations' durations, as xprof reads them
(a step's sync waits for the device when the device is behind). The window
runs from the first annotation's start to the last event the last step
caused; between annotations is xlacli's own bookkeeping, a row of the host
timeline. HLO op
times come from the profile plugin's ``hlo_stats`` where it has them (TPU)
and from the trace's per-op events otherwise (XLA:CPU), joined by module and
op name to the optimized HLO the run dumped.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from xlacli.analysis.profile.op_lines import Attribution
from xlacli.hlo.model import HloModule, Instruction
from xlacli.parse.frames import outside_xlacli
from xlacli.parse.trace_events import TraceEvent
from xlacli.report.profile import GraphTime, OpTime, StepTimes

COMPILE = "PjRtComputationClient::Compile"
EXECUTE = "PjRtComputationClient::ExecuteComputation"
EXECUTE_REPLICATED = "PjRtComputationClient::ExecuteReplicated"  # SPMD graphs
TO_DEVICE = "PjRtComputationClient::TransferToDevice"
FROM_DEVICE = "PjRtComputationClient::TransferFromDevice"
TOP_OPS = 15


@dataclass(frozen=True)
class ProfiledStep:
    """One annotated step: its number, its start and end in the trace (the
    next step's start: the window is cut at them), and the annotation's own
    duration, the step time as xprof's overview page reads it."""

    step: int
    start_s: float
    end_s: float
    annotated_s: float | None = None  # None: the whole span

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s if self.annotated_s is None else self.annotated_s


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
        steps.append(ProfiledStep(int(mark.args["step_num"]), mark.start_s, end, mark.duration_s))
    return steps


def step_times(steps: Sequence[ProfiledStep]) -> StepTimes | None:
    """Median, 90th percentile, max and mean of the step durations."""
    durations = sorted(step.duration_s for step in steps)
    if not durations:
        return None
    p90 = durations[min(len(durations) - 1, round(0.9 * (len(durations) - 1)))]
    return StepTimes(
        p50=statistics.median(durations),
        p90=p90,
        max=durations[-1],
        mean=statistics.fmean(durations),
    )


@dataclass(frozen=True)
class CompiledModule:
    """An optimized HLO module of the run, with the graph it belongs to."""

    graph_hash: str
    module: HloModule
    executed_in_window: bool


def op_times_from_trace(events: Iterable[TraceEvent]) -> list[tuple[str, str, float, int]]:
    """``(module, op, self seconds, count)`` of each HLO op event in the trace.

    On XLA:CPU a ``call`` (or a loop) is an event holding the events of the
    ops it runs, on the same thread: its own time is its duration less theirs,
    so no millisecond is counted twice.
    """
    by_thread: dict[str, list[TraceEvent]] = {}
    for event in events:
        if event.args.get("hlo_op"):
            by_thread.setdefault(event.thread, []).append(event)
    totals: dict[tuple[str, str], list[float]] = {}
    for thread_events in by_thread.values():
        for event, self_s in _self_times(thread_events):
            key = (str(event.args.get("hlo_module", "")), str(event.args["hlo_op"]))
            totals.setdefault(key, []).append(self_s)
    return [(module, op, sum(times), len(times)) for (module, op), times in totals.items()]


def _self_times(events: list[TraceEvent]) -> list[tuple[TraceEvent, float]]:
    """Each event with its duration less its direct children's (one thread's events)."""
    ordered = sorted(events, key=lambda e: (e.start_s, -e.duration_s))
    own = [e.duration_s for e in ordered]
    stack: list[int] = []
    for index, event in enumerate(ordered):
        while stack and ordered[stack[-1]].end_s <= event.start_s:
            stack.pop()
        if stack and event.end_s <= ordered[stack[-1]].end_s + 1e-9:
            own[stack[-1]] -= event.duration_s
        stack.append(index)
    return [(event, max(seconds, 0.0)) for event, seconds in zip(ordered, own, strict=True)]


def op_times_from_hlo_stats(rows: Iterable[dict[str, object]]) -> list[tuple[str, str, float, int]]:
    """The same from the plugin's ``hlo_stats`` table (self times in microseconds)."""
    result = []
    for row in rows:
        name = row.get("hlo_op_name")
        if name:
            time_us = float(row.get("total_self_time") or row.get("total_time") or 0.0)  # type: ignore[arg-type]
            count = int(row.get("occurrences") or 0)  # type: ignore[call-overload]
            result.append(("", str(name), time_us / 1e6, count))
    return result


FindLine = Callable[[str, Instruction], Attribution | None]


class InstructionIndex:
    """The instruction an op event names, by module and op name: the modules
    run in the window first."""

    def __init__(self, modules: Sequence[CompiledModule]):
        self._by_op: dict[str, list[tuple[str, str, Instruction]]] = {}
        for compiled in sorted(modules, key=lambda m: not m.executed_in_window):
            for computation in compiled.module.computations:
                for instruction in computation.instructions:
                    entry = (compiled.module.name, compiled.graph_hash, instruction)
                    self._by_op.setdefault(instruction.name, []).append(entry)

    def find(self, module_name: str, op: str) -> tuple[str, Instruction] | None:
        for name, graph_hash, instruction in self._by_op.get(op, ()):
            if not module_name or name == module_name:
                return graph_hash, instruction
        return None


def attribute_ops(
    op_times: Iterable[tuple[str, str, float, int]],
    index: InstructionIndex,
    find_line: FindLine | None,
) -> list[tuple[float, Attribution | None]]:
    """Every op's self time with its user line (None: no line found)."""
    result = []
    for module_name, op, seconds, _ in op_times:
        found = index.find(module_name, op)
        line = find_line(*found) if found is not None and find_line is not None else None
        result.append((seconds, line))
    return result


def top_ops(
    op_times: Iterable[tuple[str, str, float, int]],
    index: InstructionIndex,
    find_line: FindLine | None = None,
    limit: int = TOP_OPS,
) -> tuple[OpTime, ...]:
    """The ``limit`` most expensive ops, each with its kind, source and user line."""
    rows = []
    for module_name, op, seconds, count in sorted(op_times, key=lambda row: -row[2])[:limit]:
        found = index.find(module_name, op)
        kind, source, graph_hash, line = "", None, None, None
        if found is not None:
            graph_hash, instruction = found
            kind = instruction.fusion_kind or instruction.opcode
            metadata = instruction.metadata
            if metadata.source_file:
                source = outside_xlacli(f"{metadata.source_file}:{metadata.source_line}")
            line = find_line(graph_hash, instruction) if find_line is not None else None
        rows.append(
            OpTime(
                op,
                seconds,
                count,
                kind,
                source,
                graph_hash,
                module_name,
                user_line=line.line if line else None,
                backward=bool(line and line.backward),
                optimizer=bool(line and line.optimizer),
            )
        )
    return tuple(rows)


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
