"""Which items of two long sequences match, in time near linear in their length.

``difflib.SequenceMatcher`` finds the longest common block, then recurses on
either side of it; over a graph's IR ops (a few dozen distinct ops, each
repeated thousands of times) that is quadratic: two graphs of 65k ops took
minutes (issue 40). Graphs of one sync site differ in a few places, so the
matching is decomposed first, the way ``git diff --patience`` does:

1. a region small enough (``EXACT_LIMIT`` pairs of items) goes to
   ``SequenceMatcher`` itself, so small graphs match exactly as before;
2. a larger one matches its common prefix and suffix as they are; in what
   is left, items found exactly once on each side are anchors, and the
   longest run of anchors in the same order on both sides (patience
   sorting, n log n) matches; each gap between two anchors is matched again
   from step 1 (items unique within the gap anchor it);
3. a region without unique items (a stack of identical layers) is walked
   on both sides at once: equal items match, and at a difference the walk
   resumes at the nearest pair of positions where the next ``WINDOW`` items
   agree (compared by rolling hashes: the fewest items skipped first, within
   ``SEARCH`` items, else the next place the window occurs); what it
   skipped is matched from step 1. Where differences are closer together
   than a window, ``STRETCH`` items of each side at a time go to
   ``SequenceMatcher``.

Every step is linear in the region it looks at (sorting aside), the depth of
regions inside regions is bounded, and what ``SequenceMatcher`` sees is
bounded in size, so the whole costs O(n log n) however the graphs differ.
"""

from __future__ import annotations

import bisect
import difflib
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

# A region of at most this many pairs of items (len(a) * len(b)) is matched by
# SequenceMatcher: at most ~EXACT_LIMIT comparisons, a few milliseconds.
EXACT_LIMIT = 40_000
# Regions inside regions: beyond this depth, what is left is matched only
# where it is small enough for SequenceMatcher.
MAX_DEPTH = 8
# The walk resumes where this many items agree on both sides...
WINDOW = 16
# ...searched first among the pairs of positions this few items ahead.
SEARCH = 48
# Where no window agrees that near, this many items of each side are matched
# by SequenceMatcher at a time.
STRETCH = 64
_MODULUS = (1 << 61) - 1
_BASE = 1_000_003


def matched_pairs(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` with ``a[i] == b[j]``, increasing in both ``i`` and ``j``:
    those ``SequenceMatcher(None, a, b, autojunk=False)`` matches when
    ``len(a) * len(b) <= EXACT_LIMIT``, a near-optimal matching beyond."""
    codes: dict[Hashable, int] = {}
    sides = _Sides(
        [codes.setdefault(x, len(codes)) for x in a], [codes.setdefault(x, len(codes)) for x in b]
    )
    pairs: list[tuple[int, int]] = []
    sides.match(0, len(a), 0, len(b), 0, pairs)
    return pairs


@dataclass
class _Sides:
    """The two sequences as small integers, with prefix hashes for windows."""

    a: list[int]
    b: list[int]
    _hash_a: list[int] = field(init=False)
    _hash_b: list[int] = field(init=False)
    _power: list[int] = field(init=False)

    def __post_init__(self) -> None:
        self._hash_a, self._hash_b = _prefix_hashes(self.a), _prefix_hashes(self.b)
        self._power = [1]
        for _ in range(WINDOW):
            self._power.append(self._power[-1] * _BASE % _MODULUS)

    def match(
        self, alo: int, ahi: int, blo: int, bhi: int, depth: int, out: list[tuple[int, int]]
    ) -> None:
        """Append the matched pairs of ``a[alo:ahi]`` and ``b[blo:bhi]`` to ``out``, in order."""
        if (ahi - alo) * (bhi - blo) <= EXACT_LIMIT:
            self.exact(alo, ahi, blo, bhi, out)
            return
        a, b = self.a, self.b
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            out.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        tail = []
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            tail.append((ahi, bhi))
        if depth >= MAX_DEPTH:
            if (ahi - alo) * (bhi - blo) <= EXACT_LIMIT:
                self.exact(alo, ahi, blo, bhi, out)
        elif alo < ahi and blo < bhi:
            anchors = _unique_anchors(a, b, alo, ahi, blo, bhi)
            if anchors:
                self.between(anchors, alo, ahi, blo, bhi, depth, out)
            else:
                self.walk(alo, ahi, blo, bhi, depth, out)
        out.extend(reversed(tail))

    def exact(self, alo: int, ahi: int, blo: int, bhi: int, out: list[tuple[int, int]]) -> None:
        matcher = difflib.SequenceMatcher(None, self.a[alo:ahi], self.b[blo:bhi], autojunk=False)
        for block in matcher.get_matching_blocks():
            out.extend((alo + block.a + k, blo + block.b + k) for k in range(block.size))

    def between(
        self,
        anchors: list[tuple[int, int]],
        alo: int,
        ahi: int,
        blo: int,
        bhi: int,
        depth: int,
        out: list[tuple[int, int]],
    ) -> None:
        """The anchors, and each gap before, between and after them."""
        i, j = alo, blo
        for anchor_i, anchor_j in (*anchors, (ahi, bhi)):
            if i < anchor_i and j < anchor_j:
                self.match(i, anchor_i, j, anchor_j, depth + 1, out)
            if anchor_i < ahi:
                out.append((anchor_i, anchor_j))
            i, j = anchor_i + 1, anchor_j + 1

    def walk(
        self, alo: int, ahi: int, blo: int, bhi: int, depth: int, out: list[tuple[int, int]]
    ) -> None:
        """Both regions in step: equal items match; at a difference, resume
        where the next items agree and match what was skipped on its own."""
        a, b = self.a, self.b
        later = _Occurrences(self, alo, ahi, blo, bhi)
        i, j = alo, blo
        dense_until = alo  # just after a stretch, the next difference is likely near
        while i < ahi and j < bhi:
            if a[i] == b[j]:
                out.append((i, j))
                i, j = i + 1, j + 1
                continue
            resume = self.nearest_agreement(i, ahi, j, bhi) if i >= dense_until else None
            if resume is None:  # differences closer together than a window
                resume = self.stretch(i, ahi, j, bhi, out)
                if resume is not None:
                    i, j = resume
                    dense_until = i + WINDOW
                    continue
                resume = later.next_agreement(i, j)  # a long insertion, or nothing
            if resume is None:
                break
            next_i, next_j = resume
            if next_i > i and next_j > j:
                self.match(i, next_i, j, next_j, depth + 1, out)
            i, j = next_i, next_j
        if i < ahi and j < bhi and (ahi - i) * (bhi - j) <= EXACT_LIMIT:
            self.exact(i, ahi, j, bhi, out)

    def nearest_agreement(self, i: int, ahi: int, j: int, bhi: int) -> tuple[int, int] | None:
        """The pair of positions ahead of a difference, fewest items skipped
        first (at most ``SEARCH``), where the next items agree."""
        for skipped in range(1, SEARCH + 1):
            for skip_a in range(skipped + 1):
                at_a, at_b = i + skip_a, j + skipped - skip_a
                if at_a < ahi and at_b < bhi and self.agree(at_a, ahi, at_b, bhi):
                    return at_a, at_b
        return None

    def stretch(
        self, i: int, ahi: int, j: int, bhi: int, out: list[tuple[int, int]]
    ) -> tuple[int, int] | None:
        """Where differences are denser than a window (each of a hundred
        parameters' updates changed a little), the next ``STRETCH`` items of
        each side matched exactly; the matches in the first three quarters are
        kept (the last quarter's may belong further on), and the walk goes on
        after them. None when the stretch has too little in common."""
        a_end, b_end = min(ahi, i + STRETCH), min(bhi, j + STRETCH)
        found: list[tuple[int, int]] = []
        self.exact(i, a_end, j, b_end, found)
        if len(found) < min(a_end - i, b_end - j) // 4:
            return None
        if a_end < ahi or b_end < bhi:
            keep_a, keep_b = i + STRETCH * 3 // 4, j + STRETCH * 3 // 4
            found = [(x, y) for x, y in found if x < keep_a and y < keep_b]
        if not found:
            return None
        out.extend(found)
        return found[-1][0] + 1, found[-1][1] + 1

    def agree(self, i: int, ahi: int, j: int, bhi: int) -> bool:
        """Whether the windows at ``a[i]`` and ``b[j]`` hold the same items."""
        size = min(WINDOW, ahi - i, bhi - j)
        return self.window_a(i, size) == self.window_b(j, size) and self.a[i] == self.b[j]

    def window_a(self, start: int, size: int) -> int:
        h = self._hash_a
        return (h[start + size] - h[start] * self._power[size]) % _MODULUS

    def window_b(self, start: int, size: int) -> int:
        h = self._hash_b
        return (h[start + size] - h[start] * self._power[size]) % _MODULUS


class _Occurrences:
    """Where each window of ``WINDOW`` items starts in a region, built when a
    walk first finds no agreement near a difference (a long insertion)."""

    def __init__(self, sides: _Sides, alo: int, ahi: int, blo: int, bhi: int) -> None:
        self.sides, self.bounds = sides, (alo, ahi, blo, bhi)
        self._in_a: dict[int, list[int]] | None = None
        self._in_b: dict[int, list[int]] | None = None

    def next_agreement(self, i: int, j: int) -> tuple[int, int] | None:
        """The nearer of: ``a``'s window at ``i`` next found in ``b`` after
        ``j``, and ``b``'s window at ``j`` next found in ``a`` after ``i``."""
        alo, ahi, blo, bhi = self.bounds
        if i + WINDOW > ahi or j + WINDOW > bhi:
            return None
        if self._in_a is None or self._in_b is None:
            self._in_a = _starts(self.sides.window_a, alo, ahi)
            self._in_b = _starts(self.sides.window_b, blo, bhi)
        found = []
        in_b = _first_after(self._in_b.get(self.sides.window_a(i, WINDOW), ()), j)
        if in_b is not None:
            found.append((in_b - j, i, in_b))
        in_a = _first_after(self._in_a.get(self.sides.window_b(j, WINDOW), ()), i)
        if in_a is not None:
            found.append((in_a - i, in_a, j))
        return min(found)[1:] if found else None


def _starts(window: Callable[[int, int], int], lo: int, hi: int) -> dict[int, list[int]]:
    starts: dict[int, list[int]] = {}
    for position in range(lo, hi - WINDOW + 1):
        starts.setdefault(window(position, WINDOW), []).append(position)
    return starts


def _first_after(positions: Sequence[int], after: int) -> int | None:
    index = bisect.bisect_right(positions, after)
    return positions[index] if index < len(positions) else None


def _prefix_hashes(codes: list[int]) -> list[int]:
    hashes = [0]
    for code in codes:
        hashes.append((hashes[-1] * _BASE + code + 1) % _MODULUS)
    return hashes


def _unique_anchors(
    a: list[int], b: list[int], alo: int, ahi: int, blo: int, bhi: int
) -> list[tuple[int, int]]:
    """Items found once in each region, paired, the longest run in order kept."""
    in_a = Counter(a[alo:ahi])
    in_b = Counter(b[blo:bhi])
    where_b = {b[j]: j for j in range(blo, bhi) if in_b[b[j]] == 1 and in_a[b[j]] == 1}
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi) if a[i] in where_b]
    return _in_order(pairs)


def _in_order(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest subsequence of ``pairs`` (increasing in ``i``) whose ``j``
    increases too: patience sorting, O(n log n)."""
    tops: list[int] = []  # tops[k]: the least j ending a run of k + 1
    top_index: list[int] = []  # where in pairs that run ends
    before = [-1] * len(pairs)
    for index, (_, j) in enumerate(pairs):
        k = bisect.bisect_left(tops, j)
        if k == len(tops):
            tops.append(j)
            top_index.append(index)
        else:
            tops[k] = j
            top_index[k] = index
        before[index] = top_index[k - 1] if k else -1
    run = []
    index = top_index[-1] if top_index else -1
    while index >= 0:
        run.append(pairs[index])
        index = before[index]
    return run[::-1]
