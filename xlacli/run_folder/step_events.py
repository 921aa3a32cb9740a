"""The child's step events as the parent holds them: a step that repeats the one
before (``events.jsonl``'s ``same`` line) is kept as its clock alone.

A 10,000-step loop writes 9,998 ``same`` lines; copying the step event for each
held ~0.5 KB a step in the parent (5 MB at 10,000 steps). Here a repeat costs
8 bytes (its wall time in an ``array``) and reads back as a ``RepeatedStep``, a
mapping over the event it repeats.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from xlacli.repeats import locate


class RepeatedStep(Mapping[str, Any]):
    """A step equal to an earlier step event in all but its number and clock."""

    __slots__ = ("_event", "_step", "_wall")

    def __init__(self, event: Mapping[str, Any], step: int, wall_time_s: float) -> None:
        self._event, self._step, self._wall = event, step, wall_time_s

    def __getitem__(self, key: str) -> Any:
        if key == "step":
            return self._step
        if key == "wall_time_s":
            return self._wall
        return self._event[key]

    def __iter__(self) -> Iterator[str]:
        keys = set(self._event)
        yield from self._event
        yield from (key for key in ("step", "wall_time_s") if key not in keys)

    def __len__(self) -> int:
        return len(self._event) + ("wall_time_s" not in self._event)

    def __repr__(self) -> str:
        return f"RepeatedStep(step={self._step}, wall_time_s={self._wall})"


class StepEvents(Sequence[Mapping[str, Any]]):
    """Step events in order; the repeats of each are held as their clocks."""

    __slots__ = ("_ends", "_events", "_repeats")

    def __init__(self, events: Iterable[Mapping[str, Any]] = ()) -> None:
        self._events: list[Mapping[str, Any]] = []
        self._repeats: list[array[float]] = []
        self._ends: list[int] = []
        for event in events:
            self.append(event)

    def append(self, event: Mapping[str, Any]) -> None:
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

    def _at(self, base: int, offset: int) -> Mapping[str, Any]:
        event = self._events[base]
        if offset == 0:
            return event
        return RepeatedStep(event, event["step"] + offset, self._repeats[base][offset - 1])

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._at(*locate(self._ends, index))

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        for base, repeats in enumerate(self._repeats):
            for offset in range(len(repeats) + 1):
                yield self._at(base, offset)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]  # it grows as the child runs
