"""``xlacli report RUN``: render a saved run again, without running the model."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options


def report_command(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (or its report.json).")],
    output_format: options.Format = options.OutputFormat.text,
) -> int:
    """Show the report of a saved run: graphs, recompiles, fallbacks (capture once, render many)."""
    from xlacli.render.compile_report import render_compile_report
    from xlacli.report import load_report

    render_compile_report(load_report(run_dir), output_format.value)
    return 0
