"""Peak memory per graph and per step, from XLA's buffer assignment.

A graph's peak is the live set at the peak of XLA's heap simulation (the
``Live ranges at N (peak)`` block of ``buffer-assignment.txt``): the
arguments, outputs and temporaries alive at that point of the schedule. Its
biggest buffers are named by the HLO value, and joined through the
instruction's name to the optimized HLO's metadata: the torch op and the user
line that made them. A step's peak is the peaks of the graphs it ran, summed:
an upper bound, since a graph's temporaries are freed before the next runs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from xlacli.hlo.model import HloModule, Instruction
from xlacli.parse.frames import outside_xlacli
from xlacli.parse.memory_usage import (
    BufferValue,
    parse_buffer_values,
    parse_peak_live_set,
    parse_total_bytes,
)
from xlacli.report.memory import BufferRecord, GraphMemory, RunMemory, StepMemory
from xlacli.report.run_report import GraphRecord
from xlacli.run_folder.step_events import StepEvent

BIGGEST_BUFFERS = 5
_LAYOUT = re.compile(r"\{[^{}]*\}")
_ELEMENT = re.compile(r"[a-z][a-z0-9]*\[")


def graph_memory(
    root: Path, files: Mapping[str, str], optimized: HloModule | None
) -> GraphMemory | None:
    """The peak of one graph, or None when its buffer assignment has no live ranges."""
    text = _read(root, files.get("buffer_assignment"))
    peak = parse_peak_live_set(text) if text else None
    if peak is None:
        return None
    values = parse_buffer_values(text)
    instructions = _instructions_by_name(optimized)
    live = [
        _buffer_record(values.get(name), name, size, instructions) for name, size in peak.values
    ]
    live.sort(key=lambda buffer: -buffer.bytes)
    at = instructions.get(peak.instruction or "")
    usage = _read(root, files.get("memory_usage"))
    return GraphMemory(
        peak_bytes=peak.total_bytes,
        peak_temp_bytes=sum(b.bytes for b in live if b.role == "temporary"),
        peak_at=peak.instruction,
        peak_site=_source(at, instructions)[1] if at is not None else None,
        total_bytes=parse_total_bytes(usage or text),
        biggest=tuple(live[:BIGGEST_BUFFERS]),
    )


def _buffer_record(
    value: BufferValue | None, name: str, size: int, instructions: dict[str, Instruction]
) -> BufferRecord:
    instruction = instructions.get(name.partition("{")[0])
    op, source = _source(instruction, instructions) if instruction else ("", None)
    printed = value.shape if value is not None else str(instruction.shape) if instruction else ""
    shape = _plain_shape(printed)
    return BufferRecord(
        name=name,
        bytes=size,
        shape=shape,
        role=value.role if value is not None else "temporary",
        op=op,
        source=source,
    )


def _plain_shape(shape: str) -> str:
    """``f32[8,64]{1,0}`` -> ``f32[8,64]``; a tuple (the output table) -> ``tuple of 31``."""
    if shape.startswith("("):
        return f"tuple of {len(_ELEMENT.findall(shape))}"
    return _LAYOUT.sub("", shape)


def _source(
    instruction: Instruction, instructions: dict[str, Instruction], depth: int = 0
) -> tuple[str, str | None]:
    """``(op, file:line)`` of an instruction; a fusion or call without metadata
    takes its called computation's root's (XLA:CPU wraps fusions in calls)."""
    metadata = instruction.metadata
    source = outside_xlacli(metadata.source or None)
    if source or depth > 4:
        return metadata.op_type, source
    for computation in instruction.called_computations:
        root = instructions.get(f"root:{computation}")
        if root is not None:
            op, source = _source(root, instructions, depth + 1)
            if source:
                return op, source
    return metadata.op_type, None


def _instructions_by_name(module: HloModule | None) -> dict[str, Instruction]:
    """Every instruction by name, and each computation's root as ``root:NAME``."""
    if module is None:
        return {}
    found: dict[str, Instruction] = {}
    for computation in module.computations:
        for instruction in computation.instructions:
            found.setdefault(instruction.name, instruction)
        found[f"root:{computation.name}"] = computation.root
    return found


def step_memory(
    graphs: Sequence[GraphRecord], executions: Iterable[tuple[int | None, str | None]]
) -> tuple[StepMemory, ...]:
    """Each step's peak: the peaks of the distinct graphs it ran, summed.

    Args:
        graphs: the report's graphs, with their memory.
        executions: ``(step, graph hash)`` of every execution, in order.
    """
    peaks = {g.hash: g.memory.peak_bytes for g in graphs if g.memory is not None}
    ran: dict[int, list[str]] = {}
    for step, graph_hash in executions:
        if step is None or graph_hash not in peaks:
            continue
        hashes = ran.setdefault(step, [])
        if graph_hash not in hashes:
            hashes.append(graph_hash)
    folded: list[StepMemory] = []
    for step, hashes in sorted(ran.items()):
        peak = StepMemory(step, tuple(hashes), sum(peaks[h] for h in hashes))
        last = folded[-1] if folded else None
        if last is not None and _continues(last, peak):
            folded[-1] = dataclasses.replace(last, steps=last.steps + 1)
        else:
            folded.append(peak)
    return tuple(folded)


def _continues(run: StepMemory, step: StepMemory) -> bool:
    """The step repeats the run's graphs right after it: one record for both, so the
    report does not grow with a long loop's steps."""
    return step.step == run.step + run.steps and (step.graphs, step.peak_bytes) == (
        run.graphs,
        run.peak_bytes,
    )


def run_memory(steps: tuple[StepMemory, ...], step_events: Iterable[StepEvent]) -> RunMemory:
    """The run's memory facts: step peaks, and what the child sampled in each step."""
    device: dict[int, dict[str, int]] = {}
    autocast: dict[int, str] = {}
    unavailable = None
    for event in step_events:
        step, info, seen = event.step, event.measures.memory_info, event.measures.autocast
        if step is None:
            continue
        if isinstance(info, Mapping):
            device[step] = {k: v for k, v in info.items() if isinstance(v, int)}
        elif isinstance(info, str):
            unavailable = info
        if seen is not None:  # [] : watched, and autocast was off
            autocast[step] = ", ".join(str(kind) for kind in seen)
    return RunMemory(steps, _first_peak_last(device), unavailable, _changes(autocast))


def _first_peak_last(device: dict[int, dict[str, int]]) -> dict[int, dict[str, int]]:
    """The device's memory after the first step, the step that used the most and the
    last step: what says whether use grows, in three entries however long the run."""
    if len(device) <= 3:
        return device
    first, last = min(device), max(device)
    peak = max(device, key=lambda step: (device[step].get("bytes_used", 0), -step))
    return {step: device[step] for step in sorted({first, peak, last})}


def _changes(autocast: dict[int, str]) -> dict[int, str]:
    """Only the steps where autocast changed (``autocast_at`` reads the last one before a step)."""
    kept: dict[int, str] = {}
    for step in sorted(autocast):
        if not kept or kept[max(kept)] != autocast[step]:
            kept[step] = autocast[step]
    return kept


def largest_graph(graphs: Iterable[GraphRecord]) -> GraphRecord | None:
    """The graph with the highest peak."""
    with_memory = [g for g in graphs if g.memory is not None]
    return max(with_memory, key=lambda g: g.memory.peak_bytes if g.memory else 0, default=None)


def _read(root: Path, relative: str | None) -> str:
    if relative is None:
        return ""
    try:
        return (root / relative).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
