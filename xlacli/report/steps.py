"""A run's steps, folded: consecutive steps that did the same thing are one record.

A 10,000-step training loop runs one graph 9,998 times; keeping a record per step
made ``report.json`` and the parent's memory grow with the steps (0.5 KB a step).
The report keeps runs of equal steps (``StepRun``) and reads as a sequence of
``StepRecord`` (``StepRecords``), so every per-step reader still works. A step
inside a run carries the run's median wall time; ``events.jsonl`` keeps each
step's own clock.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from xlacli.repeats import locate, stretches

# A step's phase: a script's syncs before its loop, or the loop's (analysis/recompiles/phases.py
# reads them as SETUP and LOOP, among the phases it gives compiles).
SETUP_PHASE = "setup"
LOOP_PHASE = "loop"
# A sync after the loop started, at another place than the loop's (an evaluation's,
# a framework's gather): recorded as a step, never counted as a training iteration.
OTHER_PHASE = "other"


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
    phase: str = LOOP_PHASE  # or SETUP_PHASE


# What a step did, as a step record, a run of steps and the JSON all keep it.
WORK_FIELDS = (
    "compilations",
    "executions",
    "input_signature",
    "graph_hashes",
    "value_reads",
    "fallbacks",
    "phase",
)


def _work(step: StepRecord | StepRun) -> dict[str, Any]:
    return {name: getattr(step, name) for name in WORK_FIELDS}


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

    def record(self, offset: int, shift: int = 0) -> StepRecord:
        """The run's step ``first_step + offset`` (``+ shift``: in a later repeat of
        its cycle), with the run's median clock."""
        return StepRecord(
            step=self.first_step + shift + offset,
            wall_time_s=self.median_wall_time_s,
            **_work(self),
        )


def _same_work(a: StepRecord, b: StepRecord) -> bool:
    # A step that compiled keeps its own record: its compile event names it.
    return b.step == a.step + 1 and a.compilations == 0 and _work(a) == _work(b)


def _run(first: StepRecord, clocks: list[float]) -> StepRun:
    return StepRun(
        first_step=first.step,
        steps=len(clocks),
        **_work(first),
        wall_time_s=sum(clocks),
        median_wall_time_s=statistics.median(clocks),
        min_wall_time_s=min(clocks),
        max_wall_time_s=max(clocks),
    )


@dataclass(frozen=True)
class StepCycle:
    """Runs that repeat in order ``repeats`` times: a loop that logs, evaluates or
    accumulates every k steps. ``runs`` are the first repeat's; their clocks are
    over every repeat (total, least, most; the median of the repeats' medians)."""

    first_step: int
    repeats: int
    runs: tuple[StepRun, ...]

    @property
    def period(self) -> int:
        """Steps in one repeat."""
        return sum(run.steps for run in self.runs)

    @property
    def steps(self) -> int:
        return self.period * self.repeats


Segment = StepRun | StepCycle


def _work_key(run: StepRun) -> tuple[Any, ...]:
    return (run.steps, *_work(run).values())


def _cycle(runs: Sequence[StepRun], period: int, repeats: int) -> StepCycle:
    merged = []
    for index in range(period):
        same = [runs[index + repeat * period] for repeat in range(repeats)]
        merged.append(
            dataclasses.replace(
                same[0],
                wall_time_s=sum(run.wall_time_s for run in same),
                median_wall_time_s=statistics.median(run.median_wall_time_s for run in same),
                min_wall_time_s=min(run.min_wall_time_s for run in same),
                max_wall_time_s=max(run.max_wall_time_s for run in same),
            )
        )
    return StepCycle(runs[0].first_step, repeats, tuple(merged))


def _with_cycles(runs: list[StepRun], splits: Collection[int]) -> list[Segment]:
    """Repeating runs kept once, with their count; never across a split."""
    breaks = {index for index, run in enumerate(runs) if run.first_step in splits}
    segments: list[Segment] = []
    for stretch in stretches([_work_key(run) for run in runs], breaks=breaks):
        block = runs[stretch.start : stretch.end]
        if stretch.repeats == 1:
            segments.extend(block)
        else:
            segments.append(_cycle(block, stretch.period, stretch.repeats))
    return segments


class StepRecords(Sequence[StepRecord]):
    """The steps of a run as runs of equal steps and cycles of runs, read one
    ``StepRecord`` a step."""

    __slots__ = ("_ends", "segments")

    def __init__(self, segments: Iterable[Segment] = ()) -> None:
        self.segments: tuple[Segment, ...] = tuple(segments)
        ends, total = [], 0
        for segment in self.segments:
            total += segment.steps
            ends.append(total)
        self._ends: list[int] = ends

    @classmethod
    def fold(cls, records: Iterable[StepRecord], warmup: int | None = None) -> StepRecords:
        """Fold records (in step order) into runs, then repeating runs into cycles;
        only the open run's clocks are held.

        With ``warmup``, neither crosses the end of the warm-up, counted from the
        first step and from the loop's first step after setup syncs (as
        ``analysis/recompiles/phases.py`` ``timeline_edges`` counts it): the steady steps'
        median is then a median of whole runs.
        """
        if isinstance(records, StepRecords):
            return records
        runs: list[StepRun] = []
        splits: set[int] = set()  # steps a run must start at
        first: StepRecord | None = None
        last: StepRecord | None = None
        clocks: list[float] = []
        loop_start: int | None = None  # the position of the first loop step
        for position, record in enumerate(records):
            if loop_start is None and record.phase != SETUP_PHASE:
                loop_start = position
            if warmup is not None and position in (warmup, (loop_start or 0) + warmup):
                splits.add(record.step)
            if last is not None and record.step not in splits and _same_work(last, record):
                clocks.append(record.wall_time_s)
            else:
                if first is not None:
                    runs.append(_run(first, clocks))
                first, clocks = record, [record.wall_time_s]
            last = record
        if first is not None:
            runs.append(_run(first, clocks))
        return cls(_with_cycles(runs, splits))

    def __len__(self) -> int:
        return self._ends[-1] if self._ends else 0

    @overload
    def __getitem__(self, index: int) -> StepRecord: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[StepRecord]: ...

    def __getitem__(self, index: int | slice) -> StepRecord | Sequence[StepRecord]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        at, offset = locate(self._ends, index)
        segment = self.segments[at]
        if isinstance(segment, StepRun):
            return segment.record(offset)
        repeat, inside = divmod(offset, segment.period)
        for run in segment.runs:
            if inside < run.steps:
                return run.record(inside, shift=repeat * segment.period)
            inside -= run.steps
        raise AssertionError("a cycle's runs cover its period")

    def __iter__(self) -> Iterator[StepRecord]:
        for segment in self.segments:
            if isinstance(segment, StepRun):
                yield from (segment.record(offset) for offset in range(segment.steps))
                continue
            for repeat in range(segment.repeats):
                for run in segment.runs:
                    shift = repeat * segment.period
                    yield from (run.record(offset, shift) for offset in range(run.steps))

    def __reversed__(self) -> Iterator[StepRecord]:
        for index in range(len(self) - 1, -1, -1):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StepRecords):
            return self.segments == other.segments
        if isinstance(other, Sequence):  # step by step, as any sequence compares
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.segments)

    def __repr__(self) -> str:
        return f"StepRecords({len(self)} steps in {len(self.segments)} segments)"


def segment_to_dict(segment: Segment) -> dict[str, Any]:
    """A run as its fields; a cycle as its first step, repeats and one repeat's runs."""
    if isinstance(segment, StepRun):
        return dataclasses.asdict(segment)
    return {
        "first_step": segment.first_step,
        "repeats": segment.repeats,
        "runs": [dataclasses.asdict(run) for run in segment.runs],
    }


def segment_from_dict(data: dict[str, Any]) -> Segment:
    if "runs" in data:
        return StepCycle(
            data["first_step"],
            data.get("repeats", 1),
            tuple(step_run_from_dict(run) for run in data["runs"]),
        )
    return step_run_from_dict(data)


def _work_from_dict(data: dict[str, Any]) -> dict[str, Any]:
    """What a step did (``WORK_FIELDS``), read with the defaults of older reports."""
    return {
        "compilations": data.get("compilations", 0),
        "executions": data.get("executions", 0),
        "input_signature": tuple(data.get("input_signature", ())),
        "graph_hashes": tuple(data.get("graph_hashes", ())),
        "value_reads": data.get("value_reads", 0),
        "fallbacks": data.get("fallbacks", 0),
        "phase": data.get("phase", LOOP_PHASE),
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
