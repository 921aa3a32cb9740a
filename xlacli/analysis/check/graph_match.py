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

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.analysis.check.stable_paths import stable_path
from xlacli.parse.frames import parse_frame
from xlacli.paths import source_line, split_location
from xlacli.report.run_report import GraphRecord

SITE_TEXT_WIDTH = 60  # of a graph's name in the table: the site line, shortened


@dataclass(frozen=True)
class GraphSite:
    """What a graph is, as a baseline keeps it: the same on every machine."""

    file: str  # relative to the project's root (analysis/check/stable_paths.py)
    function: str  # the function the site line is in ("" unknown)
    text: str  # the site line's text, stripped ("" unknown)
    trigger: str  # user_sync, host_sync, step_end... (report/run_report.py GraphRecord)
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
