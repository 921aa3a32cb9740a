"""The child's step events as the parent holds them: typed (``StepEvent``), and a step
that repeats the one before (``events.jsonl``'s ``same`` line) kept as its clock alone.

A 10,000-step loop writes 9,998 ``same`` lines; copying the step event for each
held ~0.5 KB a step in the parent (5 MB at 10,000 steps). Here a repeat costs
8 bytes (its wall time in an ``array``) and reads back as a ``StepEvent`` of its own
number and clock that shares the ``Measures`` of the event it repeats.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, overload

from xlacli.repeats import locate


@dataclass(frozen=True, slots=True)
class Measures:
    """What the child measured over one stretch of its run: the setup, a step, or the
    tail after the last step (a step and the steps that repeat it share one).

    The counters that moved, the executions looked up or done, the new compile and
    execution times (``*_held``: earlier steps' samples read late, not counted for this
    one), the value reads, the CPU fallbacks' sites; for a step, what the observers
    add (inputs, phase, Dynamo, memory, op tracing, backward passes); for the setup,
    where the model's entry and inputs were found.
    """

    counters: Mapping[str, int] = field(default_factory=dict)
    executions: int | None = None  # the child's own count (None: an older child's)
    compile_time_ns: Sequence[float] = ()
    execute_time_ns: Sequence[float] = ()
    execute_end_s: Sequence[float] = ()
    execute_time_ns_held: Sequence[float] = ()
    execute_end_s_held: Sequence[float] = ()
    read_counts: Sequence[Any] = ()
    read_times: Sequence[Any] = ()
    fallback_sites: Sequence[Any] = ()
    traced: bool = False
    input_signature: Sequence[str] = ()
    input_origins: Mapping[str, Any] = field(default_factory=dict)
    phase: str | None = None
    place: str | None = None
    loop_start: int | None = None
    autocast: Sequence[str] | None = None  # [] : watched, and autocast was off
    memory_info: Mapping[str, Any] | str | None = None
    dynamo: Mapping[str, Any] | None = None
    op_tracing: Mapping[str, float] | None = None
    backward_sites: Sequence[Any] = ()
    backward_calls: int | None = None
    optimizer_steps: int | None = None
    optimizer_files: Sequence[str] = ()
    entry_site: str | None = None
    inputs_site: str | None = None


@dataclass(frozen=True, slots=True)
class StepEvent:
    """A ``setup``, ``step`` or ``tail`` event: its step (None for the setup, and for a
    tail after no step), its wall time and what it measured."""

    step: int | None
    wall_time_s: float | None
    measures: Measures


def step_event(event: Mapping[str, Any]) -> StepEvent:
    """A ``setup``, ``step`` or ``tail`` line's JSON object as its typed record; keys
    this parent does not know (a newer child's) are left out."""
    known = {key: event[key] for key in _MEASURE_KEYS if key in event}
    return StepEvent(event.get("step"), event.get("wall_time_s"), Measures(**known))


_MEASURE_KEYS = tuple(item.name for item in fields(Measures))


class StepEvents(Sequence[StepEvent]):
    """Step events in order; the repeats of each are held as their clocks."""

    __slots__ = ("_ends", "_events", "_repeats")

    def __init__(self, events: Iterable[StepEvent] = ()) -> None:
        self._events: list[StepEvent] = []
        self._repeats: list[array[float]] = []
        self._ends: list[int] = []
        for event in events:
            self.append(event)

    def append(self, event: StepEvent) -> None:
        """A step event as the child wrote it."""
        self._events.append(event)
        self._repeats.append(array("d"))
        self._ends.append(len(self) + 1)

    def repeat(self, wall_time_s: float) -> None:
        """The last step again, numbered after the step before it, with its own clock."""
        if not self._events:
            return
        self._repeats[-1].append(wall_time_s)
        self._ends[-1] += 1

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    def _at(self, base: int, offset: int) -> StepEvent:
        event = self._events[base]
        if offset == 0:
            return event
        step = (event.step or 0) + offset
        return StepEvent(step, self._repeats[base][offset - 1], event.measures)

    @overload
    def __getitem__(self, index: int) -> StepEvent: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[StepEvent]: ...

    def __getitem__(self, index: int | slice) -> StepEvent | Sequence[StepEvent]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._at(*locate(self._ends, index))

    def __iter__(self) -> Iterator[StepEvent]:
        for base, repeats in enumerate(self._repeats):
            for offset in range(len(repeats) + 1):
                yield self._at(base, offset)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # it grows as the child runs
