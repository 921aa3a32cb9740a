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

from xlacli.assemble.source_snippets import load_snippets
from xlacli.paths import write_text_file
from xlacli.render.check import load_check
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
from xlacli.report.profile import ProfileSummary, load_summary
from xlacli.report.run_report import RunReport, load_report

HTML_FILE = "report.html"


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
) -> str:
    """The whole page of a run, to be written at ``page_path`` (links are relative to it)."""
    run_dir = Path(report.run_dir)
    relative = os.path.relpath(run_dir.resolve(), page_path.resolve().parent)
    context = RunContext(
        report=report,
        run_dir=run_dir,
        href_base="" if relative == "." else relative.replace(os.sep, "/") + "/",
        profile=profile,
        check=check,
        snippets=load_snippets(run_dir),
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


def write_run_html(
    run_dir: Path, output: Path | None = None, report: RunReport | None = None
) -> Path:
    """Render the run saved in ``run_dir`` to ``output`` (default ``RUN/report.html``).

    ``report``: the run's report when the caller holds it (else read from ``run_dir``).
    """
    if report is None:
        report = load_report(run_dir)
    root = Path(report.run_dir)
    path = output or root / HTML_FILE
    page = run_page_html(report, page_path=path, profile=load_summary(root), check=load_check(root))
    write_text_file(path, page)
    return path


def announce_run_html(run_dir: Path, report: RunReport | None = None) -> Path:
    """Write ``RUN/report.html`` and say where it is (on stderr: stdout holds the report)."""
    from rich.markup import escape

    from xlacli.paths import display_path
    from xlacli.render.console import print_message

    path = write_run_html(run_dir, report=report)
    print_message(f"HTML report: [bold]{escape(display_path(path))}[/]")
    return path
