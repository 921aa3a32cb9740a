"""What every section's context function receives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.assemble.source_snippets import SourceSnippet
from xlacli.report.profile import ProfileSummary
from xlacli.report.run_report import RunReport


@dataclass(frozen=True)
class RunContext:
    """A saved run and what was saved beside it.

    Attributes:
        report: The run report.
        run_dir: The run folder.
        files: A file of the run folder by its relative path (None: it cannot be read).
        href_base: The run folder relative to the page, "" or ending in "/".
        profile: The profile summary of a profiled run.
        check: The saved outcome of ``xlacli check`` (``check.json``).
        snippets: The user's source around each line the report names.
    """

    report: RunReport
    run_dir: Path
    href_base: str
    profile: ProfileSummary | None
    check: Mapping[str, Any] | None
    snippets: Mapping[str, SourceSnippet]
    files: Callable[[str], str | None]


def event_anchor(index: int) -> str:
    """The page anchor of the ``index``-th compile explanation."""
    return f"compile-{index}"


def graph_anchor(graph_hash: str) -> str:
    """The page anchor of a graph's section."""
    return f"graph-{graph_hash}"
