"""Bucket advisor: the sizes a recompiling site saw, and the edges to pad them to.

Every compile explained as ``input_shape``, ``intermediate_shape`` or
``data_dependent_shape`` names the shape before and after; each step ran one of
the graphs those shapes belong to, so the steps give every size seen and how
often. Padding each size up to the next of k edges costs k compiles and the
padded elements; the edges that waste least are found exactly by dynamic
programming over the sorted distinct sizes (an edge is always an observed size:
moving it down to the largest size it covers only removes padding).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from xlacli.analysis.advice_inputs import AdviceInputs
from xlacli.report.advice import BucketAdvice, BucketOption
from xlacli.report.run import CompileEvent, StepRecord

SHAPE_CATEGORIES = ("input_shape", "intermediate_shape", "data_dependent_shape")
# The advised option: the fewest buckets whose padding stays within this share.
MAX_WASTE = 0.2
MAX_OPTIONS = 8
_CHANGE = re.compile(r"(?P<what>[^\s].*?)?\s*(\w+)\[([\d,]*)\]\s*->\s*\w+\[([\d,]*)\]\s*$")
_SHAPE = re.compile(r"\w+\[([\d,]*)\]")


def _first_change(detail: str) -> str:
    """The first of the changes a cause names (``; ``-separated): the input a
    short last batch shortened first, its labels' change beside it."""
    return detail.split("; ", 1)[0]


def solve_buckets(sizes: Sequence[tuple[int, int]], buckets: int) -> tuple[tuple[int, ...], int]:
    """The ``buckets`` edges minimising padding over ``(size, count)`` pairs, and that padding."""
    table = _BucketTable(sizes, buckets)
    return table.solution(table.buckets)


class _BucketTable:
    """Exact: ``best[k][i]`` is the least padding of the ``i`` smallest sizes in
    ``k`` buckets, the last bucket's edge being the ``i``-th size. One table
    answers every number of buckets up to the largest asked (a storm of 300
    lengths: one pass, not one per option)."""

    def __init__(self, sizes: Sequence[tuple[int, int]], buckets: int) -> None:
        self.ordered = ordered = sorted(sizes)
        m = len(ordered)
        self.buckets = buckets = max(1, min(buckets, m))
        # prefix sums of counts and of size * count, for O(1) bucket costs
        count_sum, mass_sum = [0], [0]
        for size, count in ordered:
            count_sum.append(count_sum[-1] + count)
            mass_sum.append(mass_sum[-1] + size * count)

        def padding(first: int, last: int) -> int:  # sizes first..last (1-based) padded to last
            edge = ordered[last - 1][0]
            return edge * (count_sum[last] - count_sum[first - 1]) - (
                mass_sum[last] - mass_sum[first - 1]
            )

        infinite = float("inf")
        best = [[infinite] * (m + 1) for _ in range(buckets + 1)]
        choice = [[0] * (m + 1) for _ in range(buckets + 1)]
        best[0][0] = 0
        for k in range(1, buckets + 1):
            for i in range(1, m + 1):
                for j in range(k, i + 1):  # the last bucket holds sizes j..i
                    cost = best[k - 1][j - 1] + padding(j, i)
                    if cost < best[k][i]:
                        best[k][i], choice[k][i] = cost, j
        self.best, self.choice = best, choice

    def solution(self, buckets: int) -> tuple[tuple[int, ...], int]:
        """The edges and padding of the best ``buckets`` buckets (at most the table's)."""
        edges, i = [], len(self.ordered)
        for k in range(buckets, 0, -1):
            edges.append(self.ordered[i - 1][0])
            i = self.choice[k][i] - 1
        return tuple(sorted(edges)), int(self.best[buckets][len(self.ordered)])


def bucket_options(sizes: Sequence[tuple[int, int]]) -> tuple[BucketOption, ...]:
    """One option per number of buckets, from 1 up to the distinct sizes (at most 8)."""
    processed = sum(size * count for size, count in sizes)
    most = min(len(sizes), MAX_OPTIONS)
    table = _BucketTable(sizes, most) if most else None
    options = []
    for k in range(1, most + 1):
        assert table is not None
        edges, padded = table.solution(k)
        options.append(BucketOption(edges, len(edges), padded / (processed + padded)))
    return tuple(options)


def advise_buckets(inputs: AdviceInputs) -> tuple[BucketAdvice, ...]:
    """Bucket advice for each site that recompiled for a changing size."""
    return tuple(
        advice for site in _shape_sites(inputs.events, inputs.step_records) for advice in site
    )


def _shape_sites(
    events: Sequence[CompileEvent], steps: Sequence[StepRecord]
) -> list[list[BucketAdvice]]:
    groups: dict[tuple[str, str | None, str], list[CompileEvent]] = {}
    for event in events:
        cause = event.cause
        match = _CHANGE.search(_first_change(cause.detail))
        if cause.category in SHAPE_CATEGORIES and match and event.compared_with:
            what = (match["what"] or "").rsplit(": ", 1)[-1].removesuffix(" shape").strip()
            groups.setdefault((cause.category, cause.location, what), []).append(event)
    return [_site_advice(steps, key, group) for key, group in groups.items()]


def _site_advice(
    steps: Sequence[StepRecord], key: tuple[str, str | None, str], events: list[CompileEvent]
) -> list[BucketAdvice]:
    category, location, what = key
    shapes: dict[str, tuple[int, ...]] = {}
    for event in events:
        before, after = _SHAPE.findall(_first_change(event.cause.detail))[-2:]
        shapes.setdefault(event.compared_with or "", _dims(before))
        shapes[event.graph_hash] = _dims(after)
    ranks = {len(dims) for dims in shapes.values()}
    if len(ranks) != 1:
        return []
    observed = [
        dims
        for step in steps
        for graph_hash in step.graph_hashes
        if (dims := shapes.get(graph_hash))
    ]
    varying = [d for d in range(ranks.pop()) if len({dims[d] for dims in shapes.values()}) > 1]
    advice = []
    for dim in varying:
        sizes = tuple(sorted(Counter(dims[dim] for dims in observed).items()))
        if len(sizes) < 2:
            continue
        options = bucket_options(sizes)
        chosen = next(
            (i for i, option in enumerate(options) if option.padding_waste <= MAX_WASTE),
            len(options) - 1,
        )
        advice.append(
            BucketAdvice(
                location=location,
                category=category,
                dimension=f"{what}, dim {dim}" if what else f"dim {dim}",
                sizes=sizes,
                steps=len(observed),
                compiles_seen=len(shapes),
                options=options,
                chosen=chosen,
                code=pad_code(options[chosen].edges, dim, len(observed)),
            )
        )
    return advice


def pad_code(edges: tuple[int, ...], dim: int, steps: int) -> str:
    """Python that pads a tensor's ``dim`` up to the next edge."""
    return (
        "import bisect\n"
        "import torch.nn.functional as F\n\n"
        f"EDGES = {edges}  # xlacli's bucket advice, from the sizes of {steps} steps\n\n\n"
        f"def pad_to_bucket(tensor, dim={dim}, value=0):\n"
        "    size = tensor.shape[dim]\n"
        "    index = bisect.bisect_left(EDGES, size)\n"
        "    edge = EDGES[index] if index < len(EDGES) else size  # above the last edge: as is\n"
        "    pad = [0, 0] * (tensor.dim() - dim - 1) + [0, edge - size]\n"
        "    return F.pad(tensor, pad, value=value)"
    )


def _dims(text: str) -> tuple[int, ...]:
    inside = text[text.index("[") + 1 : -1] if "[" in text else text
    return tuple(int(part) for part in inside.split(",") if part)
