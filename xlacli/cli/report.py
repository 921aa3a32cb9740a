"""``xlacli report RUN``: render a saved run again, without running the model."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options


def report_command(
    run_dir: Annotated[
        Path, typer.Argument(metavar="RUN", help="A run folder (or its report.json).")
    ],
    output_format: Annotated[
        options.ReportFormat,
        typer.Option(
            "--format", help="text for people, json for programs, html for a page to open or share."
        ),
    ] = options.ReportFormat.text,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="--format html: the page to write (default RUN/report.html).",
        ),
    ] = None,
) -> int:
    """Show a saved run: its graphs, recompiles and fallbacks, and its profile summary
    if it was profiled (capture once, render many).

    A run whose report was never written (xlacli was killed) gets one rebuilt
    from its raw files."""
    from xlacli.flows.rebuild import can_rebuild, rebuild_report
    from xlacli.render.compile_report import render_compile_report
    from xlacli.render.profile import render_profile
    from xlacli.report.profile import load_summary, summary_to_dict
    from xlacli.report.run import load_report, report_to_dict

    if can_rebuild(run_dir):  # xlacli was killed before it wrote the report
        rebuild_report(run_dir)
    if output_format.value == "html":
        from xlacli.render.html.run_page import write_run_html

        print(write_run_html(run_dir, output))
        return 0
    report = load_report(run_dir)
    summary = load_summary(Path(report.run_dir))
    if output_format.value == "json":
        data = report_to_dict(report)
        if summary is not None:
            data["profile"] = summary_to_dict(summary)
        sys.stdout.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
        return 0
    render_compile_report(report, "text")
    if summary is not None:
        print()
        render_profile(summary, "text")
    return 0
