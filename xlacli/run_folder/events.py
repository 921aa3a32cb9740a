"""The child's progress log, ``events.jsonl``: one JSON object per line.

The child appends and flushes an event as each thing happens, so whatever
kills it (a signal, an abort in native code, the OOM killer) leaves every
completed step on disk. Kinds: ``start``, ``setup``, ``step``, ``warning``,
``error``, ``tail``, ``end``, ``runtime`` (the device's facts once it exists), ``sharding``
(SPMD: the shardings a step first asked for) and ``dynamo`` (Dynamo's counters at the end).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from xlacli.run_folder.step_events import StepEvents

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


@dataclass
class ChildLog:
    """What the events log says, read by the parent (tolerates a cut-off last line)."""

    start: dict[str, Any] | None = None
    setup: dict[str, Any] | None = None
    steps: StepEvents = field(default_factory=StepEvents)  # a repeat held as its clock
    warnings: list[str] = field(default_factory=list)
    error: dict[str, Any] | None = None
    trace_start: dict[str, Any] | None = None  # counters when the profiled window opened
    trace: dict[str, Any] | None = None  # the profiler's session folder, files, counters
    ended: bool = False
    shardings: list[dict[str, Any]] = field(default_factory=list)  # SPMD: capture/spmd.py
    dynamo: dict[str, Any] | None = None  # Dynamo's own counters at the end, if it ran
    tail: dict[str, Any] | None = None  # metric deltas after the last step (a script's end)

    def __post_init__(self) -> None:
        if not isinstance(self.steps, StepEvents):  # a list of step events
            self.steps = StepEvents(self.steps)

    @property
    def metric_events(self) -> Iterator[Mapping[str, Any]]:
        """The events carrying metric deltas, in order (one pass)."""
        return itertools.chain(
            [self.setup] if self.setup else [], self.steps, [self.tail] if self.tail else []
        )


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
    if kind == "start":
        log.start = event
    elif kind == "runtime":  # the device's facts, once the target created it
        log.start = {**(log.start or {}), **event}
    elif kind == "setup":
        log.setup = event
    elif kind == "step":
        log.steps.append(event)
    elif kind == "same":  # the step before again, with its own clock
        log.steps.repeat(event["wall_time_s"])
    elif kind == "warning":
        log.warnings.append(event.get("message", ""))
    elif kind == "error":
        log.error = event
    elif kind == "trace_start":
        log.trace_start = event
    elif kind == "trace":
        log.trace = event
    elif kind == "tail":
        log.tail = event
    elif kind == "end":
        log.ended = True
    elif kind == "sharding":
        log.shardings.append(event)
    elif kind == "dynamo":
        log.dynamo = event
