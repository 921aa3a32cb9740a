"""Long sequences kept and shown folded: a 10,000-step loop is a few kinds of step
repeated. Runs of equal items, repeating stretches of runs (a loop that logs every
k steps), the place of one item among folded segments, and how much of a long run a
timeline shows. Used by the report's steps, the parent's step events and both
timelines."""

from __future__ import annotations

import bisect
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

MAX_PERIOD = 8  # items in one repeat: a step run, a log step, an evaluation...
MIN_REPEATS = 3  # fewer are kept as they are
# A timeline shows a run of equal steps longer than FOLD_RUN as its first KEEP_HEAD and
# last KEEP_TAIL steps and a count between (125 lines of dots for 10,000 steps before).
FOLD_RUN, KEEP_HEAD, KEEP_TAIL = 24, 8, 2


def equal_runs(keys: Sequence[Hashable], cuts: Collection[int] = ()) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of equal adjacent keys; a ``cuts`` index starts a new one."""
    runs: list[tuple[int, int]] = []
    start = 0
    while start < len(keys):
        end = start + 1
        while end < len(keys) and end not in cuts and keys[end] == keys[start]:
            end += 1
        runs.append((start, end))
        start = end
    return runs


def shown_of_run(start: int, end: int) -> tuple[range, range]:
    """What a timeline shows of the run ``items[start:end]``: its first and its last
    items; a run longer than ``FOLD_RUN`` shows ``KEEP_HEAD`` and ``KEEP_TAIL`` of them
    and the rest is hidden between (``tail.start - head.stop`` items), else all of it
    (``head``, and an empty ``tail``)."""
    if end - start <= FOLD_RUN:
        return range(start, end), range(end, end)
    return range(start, start + KEEP_HEAD), range(end - KEEP_TAIL, end)


def locate(ends: Sequence[int], index: int) -> tuple[int, int]:
    """The segment holding item ``index`` (negative: from the end) of a sequence kept
    as segments ending at ``ends`` (cumulative), and the item's offset in it."""
    total = ends[-1] if ends else 0
    if index < 0:
        index += total
    if not 0 <= index < total:
        raise IndexError("index out of range")
    segment = bisect.bisect_right(ends, index)
    return segment, index - (ends[segment - 1] if segment else 0)


@dataclass(frozen=True)
class Stretch:
    """``items[start : start + period * repeats]``: ``period`` items, ``repeats`` times."""

    start: int
    period: int
    repeats: int

    @property
    def end(self) -> int:
        return self.start + self.period * self.repeats


def stretches(
    keys: Sequence[Hashable],
    *,
    max_period: int = MAX_PERIOD,
    min_repeats: int = MIN_REPEATS,
    breaks: Collection[int] = (),
) -> list[Stretch]:
    """The sequence cut into stretches, in order: each a repeating block (the one
    covering most items, shortest period first on a tie) or a single item
    (``period`` 1, ``repeats`` 1). A stretch never has a ``breaks`` index inside it
    (it may start at one)."""
    cut: list[Stretch] = []
    start = 0
    while start < len(keys):
        best = Stretch(start, 1, 1)
        for period in range(1, max_period + 1):
            repeats = _repeats(keys, start, period, breaks)
            if repeats >= min_repeats and period * repeats > best.period * best.repeats:
                best = Stretch(start, period, repeats)
        cut.append(best)
        start = best.end
    return cut


def _repeats(keys: Sequence[Hashable], start: int, period: int, breaks: Collection[int]) -> int:
    block = keys[start : start + period]
    if len(block) < period or any(start < at < start + period for at in breaks):
        return 0
    repeats = 1
    while True:
        at = start + repeats * period
        if at in breaks or keys[at : at + period] != block:
            return repeats
        if any(at < other < at + period for other in breaks):
            return repeats
        repeats += 1
