"""Dynamo's events -> the report's ``DynamoRecord`` and compile causes.

The child records, per step, Dynamo's frame compiles and graph breaks
(``xlacli.child.dynamo``). Here each XLA compile is tied to the frame whose
FX graph it lowered: torch_xla compiles an FX graph the first time the
compiled frame runs, so the compile's innermost user frame is that frame's
code (``forward``, or ``torch_dynamo_resume_in_forward_at_11`` after a graph
break), and the owner is that code's latest frame compile up to that step.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xlacli.analysis.dynamo.global_state import changed_states
from xlacli.analysis.dynamo.guard_causes import guard_cause
from xlacli.analysis.dynamo.guards import first_read_line, guard_read_location, guarded_value
from xlacli.analysis.recompiles.hints import hint_for
from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.frames import CodeRoots, Frame, in_compiled_backward
from xlacli.paths import split_location
from xlacli.report.run_report import (
    CompileCause,
    CompileEvent,
    DynamoFrameRecord,
    DynamoRecord,
    GraphBreakRecord,
)
from xlacli.run_folder.events import ChildLog
from xlacli.units import counted

EXTRACT_COUNTER = "DynamoExtractCompiledGraph"
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<function>.+)_at_(?P<line>\d+)$")


@dataclass(frozen=True)
class XlaEvents:
    """torch_xla's compiles and executions of the run, each with its step."""

    compiles: Sequence[AnalysisEvent]
    compile_steps: Sequence[int | None]
    executions: Sequence[AnalysisEvent] = ()
    execute_steps: Sequence[int | None] = ()


def build_dynamo_record(
    log: ChildLog,
    xla: XlaEvents,
    *,
    mode: str,
    extractions: int,
    user_files: frozenset[str] = frozenset(),
) -> tuple[DynamoRecord | None, list[int | None]]:
    """The run's Dynamo record (None when Dynamo never compiled a frame), and
    the frame each XLA compile lowered (see ``xla_compile_owners``).

    ``user_files``: the user's files in the run's frames, to resolve the
    shortened paths in Dynamo's guard notes."""
    frames = _frames(log, user_files)
    if not frames:
        return None, []
    # A recompiled frame whose FX graph torch_xla had already compiled shows
    # only in executions: both say which XLA graphs each frame ran.
    hashes: dict[int, list[str]] = {}
    compile_owners = xla_compile_owners(frames, xla.compiles, xla.compile_steps, backward=True)
    execute_owners = xla_compile_owners(frames, xla.executions, xla.execute_steps)
    for events, owners in ((xla.compiles, compile_owners), (xla.executions, execute_owners)):
        for event, owner in zip(events, owners, strict=True):
            if owner is None or not event.graph_hash:
                continue
            known = hashes.setdefault(owner, [])
            if event.graph_hash not in known:
                known.append(event.graph_hash)
    records = tuple(
        dataclasses.replace(frame, graph_hashes=tuple(hashes.get(i, ())))
        for i, frame in enumerate(frames)
    )
    return DynamoRecord(
        source="xlacli" if mode == "dynamo" else "user",
        frames=records,
        graph_breaks=_graph_breaks(log),
        fx_graphs=sum(1 for frame in records if frame.fx_ops > 0),
        recompiles=sum(1 for frame in records if frame.guard_failure),
        extractions=extractions,
        counters=dict(log.dynamo_counters or {}),
    ), compile_owners


def _frames(log: ChildLog, user_files: frozenset[str]) -> list[DynamoFrameRecord]:
    return [
        DynamoFrameRecord(
            compile_id=raw.get("compile_id", ""),
            function=raw.get("function", ""),
            location=f"{raw.get('file', '')}:{raw.get('line', 0)}",
            step=event.step,
            fx_ops=raw.get("fx_ops") or 0,
            guard_failure=_guard_text(raw.get("guard_failure")),
            guard_read=_guard_read(raw, user_files),
            compile_time_s=raw.get("compile_time_s") or 0.0,
        )
        for event in log.steps
        for raw in (event.measures.dynamo or {}).get("frames", [])
        # AOTAutograd's backward compile shares its frame's compile id and
        # has no code: it is no frame compile (Dynamo's counters skip it too).
        if raw.get("function")
    ]


def _guard_read(raw: dict[str, Any], user_files: frozenset[str]) -> str | None:
    """The user's line that read the failed guard's value: Dynamo's note, else
    (a guard on a tensor or a global has none) the compiled function's first
    read of that value."""
    reason = raw.get("guard_failure")
    noted = guard_read_location(reason, user_files)
    guarded = guarded_value(reason)
    file = raw.get("file", "")
    if noted is not None or guarded is None or file not in user_files:
        return noted
    line = first_read_line(file, int(raw.get("line") or 0), guarded)
    return f"{file}:{line}" if line is not None else None


def _guard_text(reason: str | None) -> str | None:
    """``"0/0: tensor 'x' size mismatch ..."`` -> the guard text, one line each
    (Dynamo prefixes the compile it failed and may add ``# file:line`` notes)."""
    if not reason:
        return None
    lines = []
    for line in reason.splitlines():
        text = re.sub(r"^\d+/\d+: ", "", line.strip()).split("#", 1)[0].strip()
        if text:
            lines.append(text)
    return "; ".join(lines) or reason


def _break_resumed_at(
    breaks: Sequence[GraphBreakRecord], location: str
) -> tuple[GraphBreakRecord | None, str | None]:
    """The graph break a resumed frame continues after, and the library line to
    show with it. A break inside a library resumes every frame it stopped: the
    library's own (``make_grid`` after ``norm_range`` broke: the library's
    file, another line) and the user's (at the user's call): each is that one
    break, at the user's line."""
    for graph_break in breaks:
        if location in (graph_break.break_location, graph_break.location):
            return graph_break, graph_break.library_location
    file = split_location(location)[0]
    for graph_break in breaks:
        if graph_break.library_location and split_location(graph_break.library_location)[0] == file:
            return graph_break, location
    return None, None


def _graph_breaks(log: ChildLog) -> tuple[GraphBreakRecord, ...]:
    """Each break site and reason, counted; at the user's line that called into a
    library when Dynamo broke inside it."""
    counts: dict[tuple[str, str | None, str], int] = {}
    for event in log.steps:
        for raw in (event.measures.dynamo or {}).get("graph_breaks", []):
            broke = f"{raw.get('file', '')}:{raw.get('line', 0)}"
            user = f"{raw['user_file']}:{raw.get('user_line', 0)}" if raw.get("user_file") else None
            location, library = (user, broke) if user else (broke, None)
            key = (location, library, _first_line(raw.get("reason")))
            counts[key] = counts.get(key, 0) + 1
    return tuple(
        GraphBreakRecord(location, reason, n, library_location=library)
        for (location, library, reason), n in counts.items()
    )


def _first_line(text: Any) -> str:
    return str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""


def xla_compile_owners(
    frames: Sequence[DynamoFrameRecord],
    events: Sequence[AnalysisEvent],
    steps: Sequence[int | None],
    *,
    backward: bool = False,
) -> list[int | None]:
    """For each XLA compile (or execution), the index of the frame compile
    whose FX graph it lowered (None: not Dynamo's, e.g. a step's lazy sync).
    ``backward``: a compiled backward's compile belongs to the frame compiled
    last (its later runs, step after step, are no one frame's)."""
    owners: list[int | None] = []
    for index, event in enumerate(events):
        # The compiled frame's code is on the stack when its FX graph runs:
        # ``forward``, a resume function, or torch.compile's own ``inner``
        # wrapper when the model's forward is library code (nn.Sequential).
        running = {(f.function, f.file) for f in event.frames}
        step = steps[index] if index < len(steps) else None
        candidates = [
            i
            for i, frame in enumerate(frames)
            if (frame.function, split_location(frame.location)[0]) in running
            and (frame.step is None or step is None or frame.step <= step)
        ]
        if backward and not candidates and in_compiled_backward(event.frames):
            # The autograd engine runs a compiled backward with none of the
            # frame's code on the stack: the frame compiled last holds it.
            candidates = [
                i
                for i, frame in enumerate(frames)
                if frame.fx_ops and (frame.step is None or step is None or frame.step <= step)
            ]
        owners.append(candidates[-1] if candidates else None)
    return owners


def frame_callers(
    record: DynamoRecord | None, xla: XlaEvents, roots: CodeRoots
) -> dict[int, Frame]:
    """For each frame compile (by index), the user's frame that called the
    compiled function: the first user frame outside it on the stack of an XLA
    compile or execution its FX graph made."""
    if record is None:
        return {}
    callers: dict[int, Frame] = {}
    for events, steps in ((xla.compiles, xla.compile_steps), (xla.executions, xla.execute_steps)):
        owners = xla_compile_owners(record.frames, events, steps)
        for event, owner in zip(events, owners, strict=True):
            if owner is None or owner in callers:
                continue
            caller = _caller_of(record.frames[owner], event.frames, roots)
            if caller is not None:
                callers[owner] = caller
    return callers


def with_state_reads(
    record: DynamoRecord | None, callers: Mapping[int, Frame]
) -> DynamoRecord | None:
    """A guard on torch's global state is read by no line of the frame: its
    ``guard_read`` is the call made under the other state (``global_state.py``)."""
    if record is None:
        return None
    frames = tuple(
        dataclasses.replace(frame, guard_read=callers[index].location)
        if frame.guard_read is None and changed_states(frame.guard_failure) and index in callers
        else frame
        for index, frame in enumerate(record.frames)
    )
    return dataclasses.replace(record, frames=frames)


def _caller_of(frame: DynamoFrameRecord, stack: Sequence[Frame], roots: CodeRoots) -> Frame | None:
    file = split_location(frame.location)[0]
    inside = [i for i, f in enumerate(stack) if (f.function, f.file) == (frame.function, file)]
    if not inside:
        return None
    return next((f for f in stack[inside[-1] + 1 :] if roots.is_user(f)), None)


def apply_dynamo_causes(
    events: Sequence[CompileEvent],
    record: DynamoRecord | None,
    owners: Sequence[int | None],
    roots: CodeRoots,
    callers: Mapping[int, Frame] | None = None,
) -> list[CompileEvent]:
    """Re-explain the XLA compiles Dynamo caused: a failed guard is
    ``dynamo_guard`` (at the frame), a resume frame's first graph is
    ``graph_break`` (at the break). Other compiles keep their cause."""
    if record is None:
        return list(events)
    explained = []
    seen_owners: set[int] = set()
    for index, event in enumerate(events):
        owner = owners[index] if index < len(owners) else None
        cause = None
        if owner is not None:
            frame = record.frames[owner]
            # A guard failure explains every graph the new frame compile made
            # in its step (the forward, the backward); a later compile of the
            # frame (a new size it received as a symbol) keeps its own cause.
            caused = owner not in seen_owners or (
                frame.guard_failure is not None and event.step == frame.step
            )
            seen_owners.add(owner)
            caller = (callers or {}).get(owner)
            cause = _dynamo_cause(record, frame, event.cause, roots, caller) if caused else None
        explained.append(dataclasses.replace(event, cause=cause) if cause else event)
    return explained


def _dynamo_cause(
    record: DynamoRecord,
    frame: DynamoFrameRecord,
    lazy: CompileCause,
    roots: CodeRoots,
    caller: Frame | None,
) -> CompileCause | None:
    """The Dynamo cause of an XLA compile; ``lazy`` is what the IR comparison found."""
    if frame.guard_failure:
        return guard_cause(frame, lazy, roots, caller)
    resumed = _RESUME.match(frame.function)
    if resumed is None:
        return None
    location = f"{split_location(frame.location)[0]}:{resumed['line']}"
    graph_break, library = _break_resumed_at(record.graph_breaks, location)
    reason = graph_break.reason if graph_break is not None else ""
    return CompileCause(
        category="graph_break",
        location=graph_break.location if graph_break is not None else location,
        library_location=library,
        detail=f"graph break in {resumed['function']}: {reason or 'see child.log'}; "
        f"Dynamo resumed in a new frame",
        hint=hint_for("graph_break"),
    )


def user_files(xla: XlaEvents, roots: CodeRoots) -> frozenset[str]:
    """The user's files on the run's stacks (to resolve Dynamo's shortened paths)."""
    return frozenset(
        frame.file
        for event in (*xla.compiles, *xla.executions)
        for frame in event.frames
        if roots.is_user(frame)
    )


def explain_dynamo(
    log: ChildLog,
    xla: XlaEvents,
    events: Sequence[CompileEvent],
    roots: CodeRoots,
    *,
    mode: str,
    extractions: int,
) -> tuple[DynamoRecord | None, list[CompileEvent]]:
    """The Dynamo record, and the compile events with Dynamo's causes applied."""
    record, owners = build_dynamo_record(
        log, xla, mode=mode, extractions=extractions, user_files=user_files(xla, roots)
    )
    if record is None:
        return None, list(events)
    callers = frame_callers(record, xla, roots)
    return record, apply_dynamo_causes(events, record, owners, roots, callers)


def dynamo_window_note(record: DynamoRecord | None, traced_steps: set[int]) -> str | None:
    """A profile's note when Dynamo traced frames again inside the window: the
    XLA graphs may be cached, but each retrace costs host time every step."""
    if record is None:
        return None
    inside = [f for f in record.frames if f.step in traced_steps]
    if not inside:
        return None
    guards = sorted({f.guard_failure for f in inside if f.guard_failure})
    more = f", and {len(guards) - 1} more" if len(guards) > 1 else ""
    shown = f" (guard failed: {guards[0]}{more})" if guards else ""
    return (
        f"Dynamo traced {counted(len(inside), 'frame')} again inside the profiled window{shown}: "
        "xlacli compile --mode dynamo explains each"
    )
