"""Matching long op sequences in near-linear time (issue 40): the same matches
as ``difflib.SequenceMatcher`` on small sequences, a full matching of repeated
layers with a few changes, and a number of comparisons that grows with the
length, not its square (a quadratic matcher would make ~10^10 on 200k ops)."""

from __future__ import annotations

import difflib
import itertools
import random

from xlacli.analysis.recompiles import sequence_match
from xlacli.analysis.recompiles.sequence_match import matched_pairs

OPS = ("aten::mm", "aten::add", "aten::mul", "xla::device_data", "aten::permute", "aten::sum")


def _difflib_pairs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        (block.a + k, block.b + k)
        for block in matcher.get_matching_blocks()
        for k in range(block.size)
    ]


def _valid(pairs: list[tuple[int, int]], a: list, b: list) -> bool:
    increasing = all(i1 < i2 and j1 < j2 for (i1, j1), (i2, j2) in itertools.pairwise(pairs))
    return increasing and all(a[i] == b[j] for i, j in pairs)


def _layers(count: int, layer: list[str]) -> list[str]:
    return ["xla::device_data"] * 3 + layer * count + ["aten::sum"]


LAYER = [OPS[i % 5] for i in (0, 3, 1, 4, 0, 2, 1, 1, 3, 0, 2, 4, 1, 0, 2, 3, 1, 2, 0, 4)]


def test_small_sequences_match_as_sequence_matcher_does():
    generator = random.Random(0)
    for _ in range(200):
        a = [generator.choice(OPS) for _ in range(generator.randrange(0, 150))]
        b = [generator.choice(OPS) for _ in range(generator.randrange(0, 150))]
        assert matched_pairs(a, b) == _difflib_pairs(a, b)


def test_repeated_layers_with_a_few_changes_match_everything_else():
    generator = random.Random(1)
    old = _layers(400, LAYER)  # 8,004 ops, no op unique
    new = list(old)
    changes = sorted(generator.sample(range(10, len(old) - 10), 6), reverse=True)
    for position in changes:  # insertions of a common op, far apart
        new.insert(position, "aten::add")
    pairs = matched_pairs(old, new)
    assert _valid(pairs, old, new)
    assert len(pairs) == len(old)  # every old op matched: only the inserted ones are new


def test_a_removed_layer_and_a_changed_op_leave_only_them_unmatched():
    old = _layers(300, LAYER)
    new = list(old)
    del new[3 + 100 * len(LAYER) : 3 + 101 * len(LAYER)]
    new[3 + 250 * len(LAYER) + 5] = "aten::tanh"
    pairs = matched_pairs(old, new)
    assert _valid(pairs, old, new)
    assert len(pairs) == len(new) - 1


def test_sequences_with_nothing_in_common_match_nothing():
    assert matched_pairs(["a"] * 1000, ["b"] * 1000) == []
    assert matched_pairs([], ["b"]) == matched_pairs(["a"], []) == []


class _Counted:
    """An op that counts how often it is hashed or compared."""

    calls = 0

    def __init__(self, name: str) -> None:
        self.name = name

    def __hash__(self) -> int:
        _Counted.calls += 1
        return hash(self.name)

    def __eq__(self, other: object) -> bool:
        _Counted.calls += 1
        return isinstance(other, _Counted) and other.name == self.name


def test_two_graphs_of_200k_ops_cost_a_number_of_comparisons_linear_in_their_size(monkeypatch):
    generator = random.Random(2)
    names = _layers(10_000, LAYER)  # 200,004 ops
    ops = {name: _Counted(name) for name in OPS}
    old = [ops[name] for name in names]
    new = list(old)
    for position in sorted(generator.sample(range(len(old)), 50), reverse=True):
        new.insert(position, ops[generator.choice(OPS)])
    for position in generator.sample(range(len(new)), 50):
        new[position] = ops[generator.choice(OPS)]
    windows = _count_calls(monkeypatch, "agree")
    exact_pairs = _exact_sizes(monkeypatch)
    _Counted.calls = 0
    pairs = matched_pairs(old, new)
    assert _valid(pairs, old, new)
    assert len(pairs) >= len(old) - 150  # 50 ops inserted, 50 replaced, a few lost nearby
    # SequenceMatcher compares each op with every equal op of the other graph
    # (~40,000 x 200,000 here). Each op is hashed once or twice, and the
    # windows and exact matches compared stay a small fraction of the length.
    assert _Counted.calls <= 2 * (len(old) + len(new))
    assert windows[0] + sum(exact_pairs) < len(old)


def _count_calls(monkeypatch, name: str) -> list[int]:
    calls = [0]
    original = getattr(sequence_match._Sides, name)

    def counted(self, *args):
        calls[0] += 1
        return original(self, *args)

    monkeypatch.setattr(sequence_match._Sides, name, counted)
    return calls


def _exact_sizes(monkeypatch) -> list[int]:
    """The size (pairs of items) of each region SequenceMatcher is given."""
    sizes = []
    original = sequence_match._Sides.exact

    def exact(self, alo, ahi, blo, bhi, out):
        sizes.append((ahi - alo) * (bhi - blo))
        original(self, alo, ahi, blo, bhi, out)

    monkeypatch.setattr(sequence_match._Sides, "exact", exact)
    return sizes


def test_the_exact_limit_bounds_what_sequence_matcher_sees(monkeypatch):
    seen = _exact_sizes(monkeypatch)
    old = _layers(2_000, LAYER)
    new = [*old[:20_000], "aten::tanh", *old[20_000:30_000], *old[30_100:]]
    pairs = matched_pairs(old, new)
    assert seen and max(seen) <= sequence_match.EXACT_LIMIT
    assert len(pairs) == len(new) - 1


def test_changes_closer_together_than_a_window_still_match_around_them():
    # An optimizer's first update against its second: every parameter's few
    # ops differ a little (zeros made in one, state read in the other), so no
    # run of WINDOW ops agrees near a difference.
    block = ["aten::mul", "aten::add", "aten::expand", "aten::mul", "aten::sqrt", "aten::div"]
    old = [op for _ in range(3_000) for op in block]  # 18,000 ops
    new = [op if op != "aten::expand" else "xla::device_data" for op in old]
    pairs = matched_pairs(old, new)
    assert _valid(pairs, old, new)
    assert len(pairs) == len(old) - 3_000  # all but the changed op of each block
