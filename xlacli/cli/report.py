"""``xlacli report [RUN]``: render a saved run again, without running the model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options
from xlacli.cli.output import write_output


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
        print(api.write_html(run_dir, output, report=report))
        return 0
    from xlacli.render.compile_report import SavedRunView
    from xlacli.render.view import render, show

    view = SavedRunView(report, api.load_profile(report.run_dir))
    if output is None and sys.stdout.isatty():
        show(view, chosen)  # with the terminal's colours and width
    else:
        write_output(render(view, chosen), output)
    return 0
