"""Which graph of a run is which graph of its baseline: by what it is, not by its order.

A baseline keyed graphs by their order in their file (``train.py#2``), so one
graph added before the others shifted every later key and a check reported
each of them as changed. A graph is known instead by its *site*: the file,
the enclosing function and the text of the line that ran it (not the line's
number: code moves), how it was triggered (a sync, a value read...) and its
size. Baseline and run are paired by the least difference, the way the HLO
diff pairs modules; a graph left unpaired is new (or gone), and the rest keep
the baseline's names, so every other count compares with its own graph.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlacli.analysis.stable_paths import stable_path
from xlacli.parse.frames import parse_frame
from xlacli.paths import source_line, split_location
from xlacli.report.run import GraphRecord

if TYPE_CHECKING:
    from xlacli.analysis.baseline import Baseline

SITE_TEXT_WIDTH = 60  # of a graph's name in the table: the site line, shortened
# Above this difference two graphs are not the same graph (another line in another
# function): one is gone and the other new.
MATCH_LIMIT = 5.0


@dataclass(frozen=True)
class GraphSite:
    """What a graph is, as a baseline keeps it: the same on every machine."""

    file: str  # relative to the project's root (analysis/stable_paths.py)
    function: str  # the function the site line is in ("" unknown)
    text: str  # the site line's text, stripped ("" unknown)
    trigger: str  # user_sync, host_sync, step_end... (report/run.py GraphRecord)
    order: int  # its place among its file's graphs, in the run's order

    @classmethod
    def from_json(cls, data: Any) -> GraphSite | None:
        if not isinstance(data, dict):
            return None
        text = {key: data.get(key) for key in ("file", "function", "text", "trigger")}
        order = data.get("order", 0)
        if not all(isinstance(v, str) for v in text.values()) or not isinstance(order, int):
            return None
        return cls(order=order, **text)  # type: ignore[arg-type]


def graph_sites(graphs: Iterable[GraphRecord], folder: Path) -> list[tuple[str, GraphSite]]:
    """Each graph's key and site, in the run's order. The key names the graph in
    the table (``train.py main: torch_xla.sync()``, ``#2`` for the second graph
    of that line); the site is what it is matched by."""
    keyed: list[tuple[str, GraphSite]] = []
    seen_keys: dict[str, int] = {}
    per_file: dict[str, int] = {}
    for graph in graphs:
        site = _site_of(graph, folder, per_file)
        where = f"{site.file} {site.function}" if site.function else site.file
        name = f"{where}: {_short(site.text)}" if site.text else site.file
        count = seen_keys.get(name, 0) + 1
        seen_keys[name] = count
        keyed.append((name if count == 1 else f"{name} #{count}", site))
    return keyed


def _site_of(graph: GraphRecord, folder: Path, per_file: dict[str, int]) -> GraphSite:
    if not graph.site:
        file, function, text = "?", "", ""
    else:
        path, _ = split_location(graph.site)
        file = stable_path(path, folder)
        function = next(
            (
                frame.function
                for text in graph.frames
                if (frame := parse_frame(text)) is not None and frame.location == graph.site
            ),
            "",
        )
        text = source_line(graph.site) or ""
    order = per_file.get(file, 0)
    per_file[file] = order + 1
    return GraphSite(file, function, text, graph.trigger, order)


def _short(text: str) -> str:
    return text if len(text) <= SITE_TEXT_WIDTH else text[: SITE_TEXT_WIDTH - 3] + "..."


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
