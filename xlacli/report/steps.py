"""A run's steps, folded: consecutive steps that did the same thing are one record.

A 10,000-step training loop runs one graph 9,998 times; keeping a record per step
made ``report.json`` and the parent's memory grow with the steps (0.5 KB a step).
The report keeps runs of equal steps (``StepRun``) and reads as a sequence of
``StepRecord`` (``StepRecords``), so every per-step reader still works. A step
inside a run carries the run's median wall time; ``events.jsonl`` keeps each
step's own clock.
"""

from __future__ import annotations

import bisect
import statistics
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload


@dataclass(frozen=True)
class StepRecord:
    """What one step did, from torch_xla's counters around it."""

    step: int
    wall_time_s: float
    compilations: int
    executions: int
    input_signature: tuple[str, ...]  # e.g. ("input 0 f32[4,16]",)
    graph_hashes: tuple[str, ...] = ()  # the graphs it executed, in order
    value_reads: int = 0  # executions forced by reading a value on the host
    fallbacks: int = 0  # ops run on the CPU (aten:: counters)
    phase: str = "loop"  # setup (a script's syncs before its loop) or loop (analysis/phases.py)


@dataclass(frozen=True)
class StepRun:
    """Consecutive steps that compiled nothing and did the same thing but for their clocks."""

    first_step: int
    steps: int
    compilations: int
    executions: int  # in each step of the run
    input_signature: tuple[str, ...]
    graph_hashes: tuple[str, ...]
    value_reads: int
    fallbacks: int
    phase: str
    wall_time_s: float  # the run's steps together
    median_wall_time_s: float
    min_wall_time_s: float
    max_wall_time_s: float

    def record(self, offset: int) -> StepRecord:
        """The run's step ``first_step + offset``, with the run's median clock."""
        return StepRecord(
            step=self.first_step + offset,
            wall_time_s=self.median_wall_time_s,
            compilations=self.compilations,
            executions=self.executions,
            input_signature=self.input_signature,
            graph_hashes=self.graph_hashes,
            value_reads=self.value_reads,
            fallbacks=self.fallbacks,
            phase=self.phase,
        )


def _same_work(a: StepRecord, b: StepRecord) -> bool:
    # A step that compiled keeps its own record: its compile event names it.
    return (
        b.step == a.step + 1
        and a.compilations == 0
        and b.compilations == 0
        and a.executions == b.executions
        and a.graph_hashes == b.graph_hashes
        and a.input_signature == b.input_signature
        and a.value_reads == b.value_reads
        and a.fallbacks == b.fallbacks
        and a.phase == b.phase
    )


def _run(first: StepRecord, clocks: list[float]) -> StepRun:
    return StepRun(
        first_step=first.step,
        steps=len(clocks),
        compilations=first.compilations,
        executions=first.executions,
        input_signature=first.input_signature,
        graph_hashes=first.graph_hashes,
        value_reads=first.value_reads,
        fallbacks=first.fallbacks,
        phase=first.phase,
        wall_time_s=sum(clocks),
        median_wall_time_s=statistics.median(clocks),
        min_wall_time_s=min(clocks),
        max_wall_time_s=max(clocks),
    )


class StepRecords(Sequence[StepRecord]):
    """The steps of a run as runs of equal steps, read one ``StepRecord`` a step."""

    __slots__ = ("_ends", "runs")

    def __init__(self, runs: Iterable[StepRun] = ()) -> None:
        self.runs: tuple[StepRun, ...] = tuple(runs)
        ends, total = [], 0
        for run in self.runs:
            total += run.steps
            ends.append(total)
        self._ends: list[int] = ends

    @classmethod
    def fold(cls, records: Iterable[StepRecord], split_before: Collection[int] = ()) -> StepRecords:
        """Fold records (in step order) into runs; only the open run's clocks are held.

        A run never crosses a step of ``split_before`` (the end of the warm-up: the
        steady steps' median is then the median of whole runs).
        """
        if isinstance(records, StepRecords):
            return records
        runs: list[StepRun] = []
        first: StepRecord | None = None
        last: StepRecord | None = None
        clocks: list[float] = []
        for record in records:
            if last is not None and record.step not in split_before and _same_work(last, record):
                clocks.append(record.wall_time_s)
            else:
                if first is not None:
                    runs.append(_run(first, clocks))
                first, clocks = record, [record.wall_time_s]
            last = record
        if first is not None:
            runs.append(_run(first, clocks))
        return cls(runs)

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> StepRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[StepRecord]: ...

    def __getitem__(self, index: int | slice) -> StepRecord | Sequence[StepRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("step index out of range")
        at = bisect.bisect_right(self._ends, index)
        start = self._ends[at - 1] if at else 0
        return self.runs[at].record(index - start)

    def __iter__(self) -> Iterator[StepRecord]:
        for run in self.runs:
            for offset in range(run.steps):
                yield run.record(offset)

    def __reversed__(self) -> Iterator[StepRecord]:
        for run in reversed(self.runs):
            for offset in reversed(range(run.steps)):
                yield run.record(offset)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StepRecords):
            return self.runs == other.runs
        if isinstance(other, Sequence):
            return self == StepRecords.fold(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.runs)

    def __repr__(self) -> str:
        return f"StepRecords({len(self)} steps in {len(self.runs)} runs)"


def _work_from_dict(data: dict[str, Any]) -> dict[str, Any]:
    """What a step did, as a step record and a run of steps both keep it."""
    return {
        "compilations": data.get("compilations", 0),
        "executions": data.get("executions", 0),
        "input_signature": tuple(data.get("input_signature", ())),
        "graph_hashes": tuple(data.get("graph_hashes", ())),
        "value_reads": data.get("value_reads", 0),
        "fallbacks": data.get("fallbacks", 0),
        "phase": data.get("phase", "loop"),
    }


def step_run_from_dict(data: dict[str, Any]) -> StepRun:
    wall = data.get("wall_time_s", 0.0)
    return StepRun(
        first_step=data["first_step"],
        steps=data.get("steps", 1),
        wall_time_s=wall,
        median_wall_time_s=data.get("median_wall_time_s", wall),
        min_wall_time_s=data.get("min_wall_time_s", wall),
        max_wall_time_s=data.get("max_wall_time_s", wall),
        **_work_from_dict(data),
    )


def step_record_from_dict(data: dict[str, Any]) -> StepRecord:
    """One record of a version-1 report, which kept a record per step."""
    return StepRecord(
        step=data["step"], wall_time_s=data.get("wall_time_s", 0.0), **_work_from_dict(data)
    )
