"""The user's source around each line a report points at, saved in the run folder.

Read when the report is built, so that a page rendered later (or on another
machine, from a CI artifact) shows the code as it was when the run happened,
not as the working tree has it now.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from xlacli.paths import split_location
from xlacli.report.run_report import RunReport

SNIPPETS_FILE = "sources.json"
CONTEXT_LINES = 3
MAX_LINE_CHARS = 400  # a minified or generated line stays readable


@dataclass(frozen=True)
class SourceSnippet:
    """Lines ``first_line``... of a file, around the line ``line`` a report names."""

    location: str
    line: int
    first_line: int
    lines: tuple[str, ...]


def read_snippet(
    location: str,
    context: int = CONTEXT_LINES,
    files: dict[str, list[str] | None] | None = None,
) -> SourceSnippet | None:
    """The lines around ``file:line``, or None when the file cannot be read.

    ``files`` caches each file's lines: a report names many lines of one file.
    """
    file, line = split_location(location)
    if line is None:
        return None
    files = {} if files is None else files
    if file not in files:
        files[file] = _read_lines(Path(file))
    text = files[file]
    if text is None:
        return None
    if not 1 <= line <= len(text):
        return None
    first = max(1, line - context)
    last = min(len(text), line + context)
    lines = tuple(row[:MAX_LINE_CHARS] for row in text[first - 1 : last])
    return SourceSnippet(location=location, line=line, first_line=first, lines=lines)


def _read_lines(path: Path) -> list[str] | None:
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return None


def report_locations(report: RunReport) -> list[str]:
    """Every user line the report names: compile causes, fallbacks, graph sites, Dynamo."""
    locations = [event.cause.location for event in report.events]
    locations += [op.location for op in report.fallback_ops]
    locations += [graph.site for graph in report.graphs]
    if report.dynamo is not None:  # graph breaks and guard failures, shown with their code
        locations += [graph_break.location for graph_break in report.dynamo.graph_breaks]
        locations += [frame.location for frame in report.dynamo.frames if frame.guard_failure]
    return sorted({location for location in locations if location})


def save_snippets(report: RunReport, run_dir: Path) -> Path:
    """Read the snippets of ``report``'s lines now and write them to ``sources.json``."""
    files: dict[str, list[str] | None] = {}
    snippets = {
        location: asdict(snippet)
        for location in report_locations(report)
        if (snippet := read_snippet(location, files=files)) is not None
    }
    path = run_dir / SNIPPETS_FILE
    path.write_text(json.dumps(snippets, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_snippets(run_dir: Path) -> dict[str, SourceSnippet]:
    """The saved snippets by location; empty for runs saved before they existed."""
    try:
        data: Any = json.loads((run_dir / SNIPPETS_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        location: SourceSnippet(
            location=location,
            line=item.get("line", 0),
            first_line=item.get("first_line", 1),
            lines=tuple(item.get("lines", ())),
        )
        for location, item in data.items()
        if isinstance(item, dict)
    }
