"""A run's graphs paired with its baseline's by what they are (``graph_match``'s sites),
and the run renamed to the baseline's keys, so every per-graph count compares a
graph with itself."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from xlacli.analysis.check.baseline import Baseline
from xlacli.analysis.check.graph_match import GraphSite

# Above this difference two graphs are not the same graph (another line in another
# function): one is gone and the other new.
MATCH_LIMIT = 5.0


@dataclass(frozen=True)
class Pairing:
    """The run's graph keys renamed to the baseline's graphs they are, and the
    run's graphs that are new (under keys of their own)."""

    renamed: Mapping[str, str]  # the run's key -> the baseline's key
    new: tuple[str, ...]  # the run's keys (after renaming) of new graphs


def pair_graphs(baseline: Baseline, current: Baseline) -> Pairing:
    """Pair each graph of ``current`` with the baseline graph it is.

    A baseline written before graphs had sites (``graph_sites`` empty) keeps
    the old rule: graphs paired by their order in their file.
    """
    if not baseline.graph_sites:
        return _by_order(baseline, current)
    costs = sorted(
        (_difference(old, baseline.graphs.get(old_key, 0), new, current.graphs.get(new_key, 0)),
         old_key, new_key)
        for old_key, old in baseline.graph_sites.items()
        for new_key, new in current.graph_sites.items()
        if old.file == new.file
    )  # fmt: skip
    renamed: dict[str, str] = {}
    taken: set[str] = set()
    for cost, old_key, new_key in costs:
        if cost > MATCH_LIMIT or old_key in taken or new_key in renamed:
            continue
        renamed[new_key] = old_key
        taken.add(old_key)
    new: list[str] = []
    for key in current.graph_sites:
        if key in renamed:
            continue
        name = key if key not in baseline.graph_sites else f"{key} (new)"
        renamed[key] = name
        new.append(name)
    return Pairing(renamed, tuple(new))


def _difference(old: GraphSite, old_size: int, new: GraphSite, new_size: int) -> float:
    """How unlike two graphs of one file are: another line text, function or
    trigger, then the ratio of their sizes, then their order (a tie-break)."""
    return (
        (0.0 if old.text == new.text else 3.0)
        + (0.0 if old.function == new.function else 2.5)
        + (0.0 if old.trigger == new.trigger else 1.0)
        + abs(math.log2((new_size + 1) / (old_size + 1)))
        + 0.01 * abs(old.order - new.order)
    )


def _by_order(baseline: Baseline, current: Baseline) -> Pairing:
    """The old keys, ``file#n``: the n-th graph of its file."""
    renamed = {key: f"{site.file}#{site.order}" for key, site in current.graph_sites.items()}
    new = tuple(name for name in renamed.values() if name not in baseline.graphs)
    return Pairing(renamed, new)


def renamed_baseline(current: Baseline, pairing: Pairing) -> Baseline:
    """``current`` with its graphs under the baseline's names (``pairing``)."""
    names = pairing.renamed

    def graph_keyed(values: Mapping[str, Any]) -> dict[str, Any]:
        return {names.get(key, key): value for key, value in values.items()}

    def collective_keyed(values: Mapping[str, int]) -> dict[str, int]:
        # "<graph key> all-gather" and "<graph key> all-gather bytes"
        renamed = {}
        for key, value in values.items():
            graph = max((g for g in names if key.startswith(g + " ")), key=len, default=None)
            renamed[key if graph is None else names[graph] + key[len(graph) :]] = value
        return renamed

    return replace(
        current,
        graphs=graph_keyed(current.graphs),
        peak_bytes=graph_keyed(current.peak_bytes),
        peak_buffers=graph_keyed(current.peak_buffers),
        collectives=collective_keyed(current.collectives),
        graph_sites=graph_keyed(current.graph_sites),
    )
