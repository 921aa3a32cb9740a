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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from xlacli.analysis.advice.bucket_code import bucket_code, drop_last_code
from xlacli.analysis.advice.inputs import AdviceInputs
from xlacli.analysis.advice.loss_targets import loss_targets
from xlacli.parse.ir_dump import IrNode
from xlacli.report.advice import BucketAdvice, BucketOption
from xlacli.report.run_report import CompileEvent, StepRecord

SHAPE_CATEGORIES = ("input_shape", "intermediate_shape", "data_dependent_shape")
# The advised option: the fewest buckets whose padding stays within this share.
MAX_WASTE = 0.2
MAX_OPTIONS = 8
_CHANGE = re.compile(r"(?P<what>[^\s].*?)?\s*(\w+)\[([\d,]*)\]\s*->\s*\w+\[([\d,]*)\]\s*$")
_FULL_SHAPE = re.compile(r"\w+\[[\d,]*\]")


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
    """One bucket advice for each site that recompiled for a changing size."""
    ir = {artifacts.graph.hash: artifacts.ir_nodes for artifacts in inputs.graphs}
    sites: dict[str | None, list[CompileEvent]] = {}
    for event in inputs.events:
        if event.cause.category in SHAPE_CATEGORIES and event.compared_with and _changes(event):
            sites.setdefault(event.cause.location, []).append(event)
    found = (_site_advice(inputs.step_records, events, ir) for events in sites.values())
    return tuple(advice for advice in found if advice is not None)


@dataclass(frozen=True)
class _Change:
    what: str  # "input 0", "xla::select"
    before: str  # "s64[4,16]"
    after: str


@dataclass(frozen=True)
class _Candidate:
    """One dimension of one tensor that changed at the site, and its options."""

    what: str
    category: str
    dim: int
    per_step: tuple[int, ...]  # its size at each step that ran one of the site's graphs
    shape: str  # the tensor's last shape (``s64[2,9]``), to meet the IR's loss targets
    options: tuple[BucketOption, ...]
    chosen: int

    @property
    def sizes(self) -> tuple[tuple[int, int], ...]:
        return tuple(sorted(Counter(self.per_step).items()))

    @property
    def advised(self) -> bool:
        """Fewer compiles than sizes within the padding allowed."""
        return self.options[self.chosen].compiles < len(self.sizes)

    @property
    def label(self) -> str:
        return f"{self.what}, dim {self.dim}" if self.what else f"dim {self.dim}"


def _changes(event: CompileEvent) -> list[_Change]:
    """Every change a cause names (``; ``-separated), each tensor's name and shapes."""
    changes = []
    for part in event.cause.detail.split("; "):
        match = _CHANGE.search(part)
        if match is None:
            continue
        what = (match["what"] or "").rsplit(": ", 1)[-1].removesuffix(" shape").strip()
        before, after = _FULL_SHAPE.findall(part)[-2:]
        changes.append(_Change(what, before, after))
    return changes


def _site_advice(
    steps: Sequence[StepRecord], events: list[CompileEvent], ir: Mapping[str, Sequence[IrNode]]
) -> BucketAdvice | None:
    """One advice for the site: the dimension whose buckets cut the most compiles,
    the tensors whose size changed with it padded together (a loss's target with
    the loss's ignored index), a short last batch offered ``drop_last`` first,
    and the site's other changing dimensions noted."""
    candidates = _candidates(steps, events)
    if not candidates:
        return None
    # Advised first, then the most compiles saved, then a graph input (what the user
    # pads) before an intermediate shape that follows from it.
    best = min(
        candidates,
        key=lambda c: (
            not c.advised,
            -(len(c.sizes) - c.options[c.chosen].compiles),
            SHAPE_CATEGORIES.index(c.category),
        ),
    )
    together = [c for c in candidates if c.per_step == best.per_step and c.what != best.what]
    together = [c for i, c in enumerate(together) if c.what not in {t.what for t in together[:i]}]
    others = [c for c in candidates if c is not best and c not in together]
    tensors = [best, *together]
    targets = _targets(tensors, [ir.get(event.graph_hash, ()) for event in events])
    last_batch = _only_a_last_batch(best)
    edges = best.options[best.chosen].edges
    code = ""
    if best.advised or last_batch:
        code = bucket_code(edges, best.dim, len(best.per_step), [t.what for t in tensors], targets)
        if last_batch:
            code = drop_last_code(best.sizes) + code
    return BucketAdvice(
        location=events[0].cause.location,
        category=best.category,
        dimension=best.label,
        sizes=best.sizes,
        steps=len(best.per_step),
        compiles_seen=len({e.graph_hash for e in events} | {e.compared_with or "" for e in events}),
        options=best.options,
        chosen=best.chosen,
        code=code,
        padded_with=tuple(t.what for t in together),
        targets=tuple(targets.items()),
        drop_last=last_batch,
        also=tuple(_other_note(c) for c in others),
    )


def _candidates(steps: Sequence[StepRecord], events: list[CompileEvent]) -> list[_Candidate]:
    shapes: dict[str, dict[str, str]] = {}  # tensor -> graph hash -> its shape there
    categories: dict[str, str] = {}
    for event in events:
        for change in _changes(event):
            seen = shapes.setdefault(change.what, {})
            seen.setdefault(event.compared_with or "", change.before)
            seen[event.graph_hash] = change.after
            categories.setdefault(change.what, event.cause.category)
    candidates = []
    for what, by_graph in shapes.items():
        dims = {graph: _dims(shape) for graph, shape in by_graph.items()}
        if len({len(d) for d in dims.values()}) != 1:
            continue
        observed = [dims[h] for step in steps for h in step.graph_hashes if h in dims]
        rank = len(next(iter(dims.values())))
        for dim in range(rank):
            per_step = tuple(d[dim] for d in observed)
            if len(set(per_step)) < 2:
                continue
            sizes = tuple(sorted(Counter(per_step).items()))
            options = bucket_options(sizes)
            chosen = next(
                (i for i, option in enumerate(options) if option.padding_waste <= MAX_WASTE),
                len(options) - 1,
            )
            last = list(by_graph.values())[-1]
            candidates.append(
                _Candidate(what, categories[what], dim, per_step, last, options, chosen)
            )
    return candidates


def _targets(tensors: list[_Candidate], graphs: list[Sequence[IrNode]]) -> dict[str, str]:
    """``{tensor: loss op}`` for the padded tensors a loss takes as its target.

    The IR meets a tensor by its shape; tensors of one shape that are not all
    targets (tokens and their labels) are told apart by the batch's order, the
    inputs first and the labels last.
    """
    found: Counter[tuple[str, str]] = Counter()
    for nodes in graphs:
        found |= loss_targets(nodes)
    targets: dict[str, str] = {}
    by_shape: dict[str, list[_Candidate]] = {}
    for tensor in tensors:
        by_shape.setdefault(tensor.shape, []).append(tensor)
    for (shape, loss), count in found.items():
        for tensor in by_shape.get(shape, [])[-count:]:
            targets[tensor.what] = loss
    return targets


def _only_a_last_batch(candidate: _Candidate) -> bool:
    """The batch dimension with one full size and one shorter one that never comes
    twice in a row: an epoch's last batch, which ``drop_last=True`` removes."""
    sizes = candidate.sizes
    if candidate.dim != 0 or len(sizes) != 2 or sizes[0][1] >= sizes[1][1]:
        return False
    short = sizes[0][0]
    runs = zip(candidate.per_step, candidate.per_step[1:], strict=False)
    return not any(a == short and b == short for a, b in runs)


def _other_note(candidate: _Candidate) -> str:
    sizes = ", ".join(str(size) for size, _ in candidate.sizes)
    verdict = (
        f"buckets {candidate.options[candidate.chosen].edges} would do"
        if candidate.advised
        else f"every bucketing pads more than {MAX_WASTE:.0%}: kept"
    )
    return f"{candidate.label} also changes here (sizes {sizes}): {verdict}"


def _dims(text: str) -> tuple[int, ...]:
    inside = text[text.index("[") + 1 : -1] if "[" in text else text
    return tuple(int(part) for part in inside.split(",") if part)
