"""``xlacli report [RUN]``: render a saved run again, without running the model."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from xlacli.cli import options
from xlacli.cli.output import write_output

if TYPE_CHECKING:
    from xlacli.report.profile import ProfileSummary
    from xlacli.report.run_report import RunReport


def report_command(
    run_dir: Annotated[
        Path | None,
        typer.Argument(
            metavar="[RUN]",
            help="A run folder, its report.json, or a run's name under .xlacli/runs."
            + options.shown("the latest run"),
            show_default=False,
        ),
    ] = None,
    output_format: options.FileFormat = None,
    output: options.Output = None,
) -> int:
    """Show a saved run: its verdict, graphs, recompiles and fallbacks, and its
    profile summary if it was profiled (capture once, render many). A multi-process
    run's folder (rank-0/, rank-1/...) shows the ranks merged again from their folders.

    A run whose report was never written (xlacli was killed) gets one rebuilt
    from its raw files."""
    from xlacli import api
    from xlacli.flows.ranks import is_merged_run, show_merged_run

    chosen = options.file_format(output_format, output)
    run_dir = api.find_run(run_dir)
    if is_merged_run(run_dir):  # a launched run: one folder per rank, merged
        show_merged_run(run_dir, "json" if chosen == "json" else "text")
        return 0
    report = api.load_report(run_dir)  # rebuilt first if xlacli was killed before writing it
    if chosen == "html":
        from xlacli.render.html.run_page import write_run_html

        print(write_run_html(run_dir, output, report=report))
        return 0
    to_string = output is not None or not sys.stdout.isatty()
    summary = api.load_profile(report.run_dir)
    write_output(_report_text(report, summary, chosen, to_string=to_string), output)
    return 0


def _report_text(
    report: RunReport, summary: ProfileSummary | None, output_format: str, *, to_string: bool
) -> str:
    """The report as text or JSON, with its profile summary if it has one
    (text: printed with a terminal's colours and width unless ``to_string``)."""
    from xlacli.render.compile_report import render_compile_report
    from xlacli.render.profile import render_profile
    from xlacli.report.profile import summary_to_dict
    from xlacli.report.run_report import report_to_dict

    if output_format == "json":
        data = report_to_dict(report)
        if summary is not None:
            data["profile"] = summary_to_dict(summary)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed) if to_string else contextlib.nullcontext():
        render_compile_report(report, "text")
        if summary is not None:
            print()
            render_profile(summary, "text")
    return printed.getvalue()
