"""``xlacli report [RUN]``: render a saved run again, without running the model."""

from __future__ import annotations

import contextlib
import io
import json
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
    from xlacli.flows.ranks import is_merged_run, show_merged_run
    from xlacli.flows.rebuild import can_rebuild, rebuild_report
    from xlacli.flows.runs import resolve_run

    chosen = options.file_format(output_format, output)
    run_dir = resolve_run(run_dir)
    if is_merged_run(run_dir):  # a launched run: one folder per rank, merged
        show_merged_run(run_dir, "json" if chosen == "json" else "text")
        return 0
    if can_rebuild(run_dir):  # xlacli was killed before it wrote the report
        rebuild_report(run_dir)
    if chosen == "html":
        from xlacli.render.html.run_page import write_run_html

        print(write_run_html(run_dir, output))
        return 0
    to_string = output is not None or not sys.stdout.isatty()
    write_output(_report_text(run_dir, chosen, to_string=to_string), output)
    return 0


def _report_text(run_dir: Path, output_format: str, *, to_string: bool) -> str:
    """The report as text or JSON, with its profile summary if it has one
    (text: printed with a terminal's colours and width unless ``to_string``)."""
    from xlacli.render.compile_report import render_compile_report
    from xlacli.render.profile import render_profile
    from xlacli.report.profile import load_summary, summary_to_dict
    from xlacli.report.run import load_report, report_to_dict

    report = load_report(run_dir)
    summary = load_summary(Path(report.run_dir))
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
