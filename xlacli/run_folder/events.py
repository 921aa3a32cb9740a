"""The child's progress log, ``events.jsonl``: one JSON object per line.

The child appends and flushes an event as each thing happens, so whatever
kills it (a signal, an abort in native code, the OOM killer) leaves every
completed step on disk. Kinds: ``start``, ``setup``, ``step``, ``warning``,
``error``, ``tail``, ``end``, ``runtime`` (the device's facts once it exists), ``sharding``
(SPMD: the shardings a step first asked for) and ``dynamo`` (Dynamo's counters at the end).

The parent parses each line once, here, into a typed record (``StepEvent``,
``StartEvent``, ``ErrorEvent``, ``TraceMark``, ``ShardingEvent``); the file's format
is the child's and does not change with them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TextIO, TypeVar

from xlacli.run_folder.step_events import StepEvent, StepEvents, step_event

# The StepTrace name the child gives each profiled step; the summary reads it back.
STEP_TRACE_NAME = "xlacli_step"


class EventWriter:
    """Appends events to the log, one flushed line each."""

    def __init__(self, path: Path):
        self._file: TextIO = path.open("a", encoding="utf-8")

    def write(self, event: str, /, **fields: Any) -> None:
        self._file.write(json.dumps({"event": event, **fields}, sort_keys=True) + "\n")
        self._file.flush()

    def write_same(self, wall_time_s: float) -> None:
        """A step that repeats the last step event in all but its wall time."""
        self._file.write(f'{{"event": "same", "wall_time_s": {float(wall_time_s)!r}}}\n')
        self._file.flush()

    def close(self) -> None:
        self._file.close()


@dataclass(frozen=True, slots=True)
class StartEvent:
    """``start``, with the device's facts (``runtime``) once the target created it."""

    device: str = "unknown"
    versions: Mapping[str, str] = field(default_factory=dict)
    rank: int | None = None
    device_count: int | None = None
    global_devices: int | None = None
    global_mesh: Mapping[str, Any] | None = None
    spmd: bool = False


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """How the child failed: the error's type name (``kind``) and what it says."""

    kind: str
    message: str
    exit_code: int | None = None
    details: str | None = None
    hint: str | None = None


@dataclass(frozen=True, slots=True)
class TraceMark:
    """The profiler's window opening (``trace_start``) or closing (``trace``): the
    compile and execution counts then; on closing, the session's files, or why xlacli
    stood aside (the script traced itself)."""

    compilations: int | None = None
    executions: int | None = None
    time_ns: int | None = None
    files: Sequence[str] = ()
    session_dir: str | None = None
    stood_aside: str | None = None


@dataclass(frozen=True, slots=True)
class ShardingEvent:
    """SPMD: the shardings and meshes a step (None: the setup) first asked for."""

    step: int | None
    shardings: Sequence[Mapping[str, Any]] = ()
    meshes: Sequence[Mapping[str, Any]] = ()
    global_mesh: Mapping[str, Any] | None = None


@dataclass
class ChildLog:
    """What the events log says, read by the parent (tolerates a cut-off last line)."""

    start: StartEvent | None = None
    setup: StepEvent | None = None
    steps: StepEvents = field(default_factory=StepEvents)  # a repeat held as its clock
    warnings: list[str] = field(default_factory=list)
    error: ErrorEvent | None = None
    trace_start: TraceMark | None = None  # counts when the profiled window opened
    trace: TraceMark | None = None  # the profiler's session folder, files, counts
    ended: bool = False
    shardings: list[ShardingEvent] = field(default_factory=list)  # SPMD: child/spmd.py
    dynamo_counters: Mapping[str, Any] | None = None  # Dynamo's own, at the end, if it ran
    tail: StepEvent | None = None  # metric deltas after the last step (a script's end)

    def __post_init__(self) -> None:
        if not isinstance(self.steps, StepEvents):  # step events, or their JSON objects
            self.steps = StepEvents(
                e if isinstance(e, StepEvent) else step_event(e) for e in self.steps
            )

    def backward_lines(self) -> dict[int | None, str]:
        """Each step's first ``loss.backward()`` line (the child records them): where the
        ops the autograd engine made (no Python frame of their own) come from."""
        return {e.step: sites[0] for e in self.steps if (sites := e.measures.backward_sites)}

    @property
    def metric_events(self) -> Iterator[StepEvent]:
        """The events carrying metric deltas, in order (one pass)."""
        return itertools.chain(
            [self.setup] if self.setup else [], self.steps, [self.tail] if self.tail else []
        )


def _record(cls: type[_R], event: Mapping[str, Any]) -> _R:
    """A record of ``cls`` from the keys of ``event`` it declares."""
    return cls(**{key: event[key] for key in _KEYS[cls] if key in event})


_R = TypeVar("_R", StartEvent, ErrorEvent, ShardingEvent, TraceMark)
_KEYS = {
    cls: frozenset(item.name for item in fields(cls))
    for cls in (StartEvent, ErrorEvent, ShardingEvent, TraceMark)
}


class EventFollower:
    """Reads the events log as the child appends to it: each poll parses only
    the lines added since the last, so following a long run stays cheap (the
    parent shares the machine with the steps it is measuring)."""

    def __init__(self, path: Path):
        self.path = path
        self.log = ChildLog()
        self._offset = 0

    def poll(self) -> ChildLog:
        """Read the complete lines added since the last poll; returns the log so far."""
        try:
            with self.path.open("rb") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
        except FileNotFoundError:
            return self.log
        complete = chunk[: chunk.rfind(b"\n") + 1]  # a line being written waits
        self._offset += len(complete)
        for line in complete.decode("utf-8", errors="replace").splitlines():
            _add_event(self.log, line)
        return self.log


def read_events(path: Path) -> ChildLog:
    """Read the whole events log; a missing file is an empty log. A last line
    cut off mid-write (the child died) is skipped."""
    log = ChildLog()
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return log
    for line in lines:
        _add_event(log, line)
    return log


def _add_event(log: ChildLog, line: str) -> None:
    try:
        event = json.loads(line)
    except json.JSONDecodeError:
        return  # the child died mid-write
    kind = event.get("event")
    if kind == "step":
        log.steps.append(step_event(event))
    elif kind == "same":  # the step before again, with its own clock
        log.steps.repeat(event["wall_time_s"])
    elif kind == "start":
        log.start = _record(StartEvent, event)
    elif kind == "runtime":  # the device's facts, once the target created it
        runtime = {key: event[key] for key in _KEYS[StartEvent] if key in event}
        log.start = dataclasses.replace(log.start or StartEvent(), **runtime)
    elif kind in ("setup", "tail"):
        setattr(log, kind, step_event(event))
    elif kind == "warning":
        log.warnings.append(event.get("message", ""))
    elif kind == "error":
        log.error = _record(ErrorEvent, event)
    elif kind in ("trace_start", "trace"):
        setattr(log, kind, _record(TraceMark, event))
    elif kind == "end":
        log.ended = True
    elif kind == "sharding":
        log.shardings.append(_record(ShardingEvent, event))
    elif kind == "dynamo":
        log.dynamo_counters = event.get("counters", {})
