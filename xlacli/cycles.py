"""Repeating stretches of a sequence: a loop that logs every k steps repeats the same
few kinds of step thousands of times. The report keeps such a stretch once with its
count, and the timelines draw it once; this finds them."""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

MAX_PERIOD = 8  # items in one repeat: a step run, a log step, an evaluation...
MIN_REPEATS = 3  # fewer are kept as they are


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
