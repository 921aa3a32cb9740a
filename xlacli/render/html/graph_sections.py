"""Context of the per-graph sections: IR, HLO before and after, buffer sizes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from xlacli.paths import display_location, split_location
from xlacli.render.html.context import RunContext, event_anchor, graph_anchor
from xlacli.render.html.text_blocks import TextBlock, text_block
from xlacli.report.run_report import GraphRecord

BLOCKS = (
    ("ir", "Lazy IR"),
    ("hlo_before", "HLO before optimization"),
    ("hlo_after", "HLO after optimization"),
)
FILE_LINKS = (("buffer_assignment", "buffer assignment"), ("memory_usage", "memory usage"))


def context(run: RunContext) -> dict[str, Any] | None:
    """One entry per graph, in the report's order."""
    if not run.report.graphs:
        return None
    anchors = _ir_anchors(run)
    return {
        "graphs": [
            _graph_item(run, graph, anchors.get(graph.hash, {})) for graph in run.report.graphs
        ]
    }


def _graph_item(run: RunContext, graph: GraphRecord, anchors: dict[str, str]) -> dict[str, Any]:
    blocks: list[TextBlock] = []
    for role, title in BLOCKS:
        relative = graph.files.get(role)
        block = relative and text_block(
            run.files(relative),
            relative,
            role=role,
            title=title,
            href_base=run.href_base,
            anchors=anchors if role == "ir" else None,
        )
        if block:
            blocks.append(block)
    return {
        "graph": graph,
        "anchor": graph_anchor(graph.hash),
        "site": display_location(graph.site) or "?",
        "frames": graph.frames,
        "blocks": blocks,
        "files": [
            {"title": title, "href": run.href_base + graph.files[role]}
            for role, title in FILE_LINKS
            if role in graph.files
        ],
        "compiles": [
            {"anchor": event_anchor(index), "step": event.step, "category": event.cause.category}
            for index, event in enumerate(run.report.events)
            if event.graph_hash == graph.hash
        ],
    }


def _ir_anchors(run: RunContext) -> dict[str, dict[str, str]]:
    """Per graph: ``file.py:line`` (as torch_xla's IR names it) -> its compile's anchor."""
    anchors: dict[str, dict[str, str]] = {}
    for index, event in enumerate(run.report.events):
        for location in (event.cause.location, event.cause.library_location):
            if not location:
                continue
            file, line = split_location(location)
            if line is not None:
                key = f"{Path(file).name}:{line}"
                anchors.setdefault(event.graph_hash, {}).setdefault(key, event_anchor(index))
    return anchors
