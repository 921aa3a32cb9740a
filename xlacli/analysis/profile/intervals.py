"""Half-open time intervals ``(start, end)`` in seconds: unions and overlaps."""

from __future__ import annotations

from collections.abc import Iterable

Interval = tuple[float, float]


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """The sorted, disjoint union of the intervals (empty ones dropped)."""
    merged: list[Interval] = []
    for start, end in sorted(i for i in intervals if i[1] > i[0]):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def intersect_total(first: Iterable[Interval], second: Iterable[Interval]) -> float:
    """Seconds in both: each list's own union is taken first."""
    a, b = union(first), union(second)
    total, i, j = 0.0, 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(high - low, 0.0)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total
