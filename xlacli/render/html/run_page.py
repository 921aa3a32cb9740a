"""The run page: a header, then one section per view of the saved run.

A section is a partial template under ``render/templates/sections/`` plus a
context function ``(RunContext) -> dict | None`` (None: nothing to show, the
section and its entry in the contents are left out). A new view of the report
(memory, sharding, graph breaks...) is one more ``Section`` in ``RUN_SECTIONS``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.assemble.source_snippets import SourceSnippet
from xlacli.render.html import (
    advice_section,
    check_section,
    dynamo_section,
    graph_sections,
    memory_section,
    profile_section,
    run_sections,
    spmd_section,
)
from xlacli.render.html.context import RunContext
from xlacli.render.html.page import render_page
from xlacli.report.profile import ProfileSummary
from xlacli.report.run_report import RunReport


@dataclass(frozen=True)
class Section:
    """One part of the run page: its anchor, heading, partial template and data."""

    id: str
    title: str
    template: str
    context: Callable[[RunContext], Mapping[str, Any] | None]


RUN_SECTIONS: tuple[Section, ...] = (
    Section("check", "Check against the baseline", "sections/check.html.j2", check_section.context),
    Section("timeline", "Steps", "sections/timeline.html.j2", run_sections.timeline_context),
    Section("graphs", "Graphs", "sections/graph_table.html.j2", run_sections.graph_table_context),
    Section(
        "recompiles", "Compiles, explained", "sections/recompiles.html.j2", run_sections.recompiles
    ),
    Section("dynamo", "torch.compile (Dynamo)", "sections/dynamo.html.j2", dynamo_section.context),
    Section("fallbacks", "CPU fallbacks", "sections/fallbacks.html.j2", run_sections.fallbacks),
    Section("spmd", "SPMD", "sections/spmd.html.j2", spmd_section.context),
    Section("memory", "Memory and precision", "sections/memory.html.j2", memory_section.context),
    Section("profile", "Profile", "sections/profile.html.j2", profile_section.context),
    Section("advice", "Compile cost and advice", "sections/advice.html.j2", advice_section.context),
    Section("details", "Each graph", "sections/graph_details.html.j2", graph_sections.context),
)


def run_page_html(
    report: RunReport,
    *,
    page_path: Path,
    profile: ProfileSummary | None = None,
    check: Mapping[str, Any] | None = None,
    snippets: Mapping[str, SourceSnippet] | None = None,
    files: Callable[[str], str | None] = lambda relative: None,
) -> str:
    """The whole page of a run, to be written at ``page_path`` (links are relative to it).

    ``profile``, ``check``, ``snippets`` and ``files`` (a file of the run folder by its
    relative path) are what was saved beside the report (``flows/pages.py`` reads them).
    """
    run_dir = Path(report.run_dir)
    relative = os.path.relpath(run_dir.resolve(), page_path.resolve().parent)
    context = RunContext(
        report=report,
        run_dir=run_dir,
        href_base="" if relative == "." else relative.replace(os.sep, "/") + "/",
        profile=profile,
        check=check,
        snippets=snippets or {},
        files=files,
    )
    sections = []
    for section in RUN_SECTIONS:
        data = section.context(context)
        if data is not None:
            sections.append(
                {
                    "id": section.id,
                    "title": section.title,
                    "template": section.template,
                    "data": data,
                }
            )
    return render_page(
        "run.html.j2", {"header": run_sections.header(context), "sections": sections}
    )
