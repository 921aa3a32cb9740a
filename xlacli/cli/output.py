"""Where a command's report goes: stdout, or the ``--output`` file; runs shown."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from xlacli.paths import write_text_file

if TYPE_CHECKING:
    from xlacli.api import ModeComparison, Run


def write_output(text: str, output: Path | None) -> None:
    """Print ``text`` on stdout, or write it to ``output`` and print the file's path.

    Raises:
        UsageError: the file cannot be written.
    """
    if output is None:
        sys.stdout.write(text)
        return
    write_text_file(output, text)
    print(output)


def show_comparison(
    comparison: ModeComparison, output_format: str, command: str = "compile"
) -> None:
    """``--mode both``: the modes side by side on stdout (a profile's summaries in its JSON)."""
    from xlacli.render.compare import render_comparison
    from xlacli.report.profile import summary_to_dict

    profiles = {mode: summary_to_dict(s) for mode, s in comparison.profiles.items()}
    extra = {"profiles": profiles} if profiles else None
    reports = {mode: run.report for mode, run in comparison.runs.items()}
    render_comparison(reports, comparison.figures, output_format, command=command, extra=extra)


def write_html(runs: Iterable[Run]) -> None:
    """``--html``: each run's page, ``RUN/report.html``, named on stderr."""
    from xlacli.render.html.run_page import announce_run_html

    for run in runs:
        for folder, report in run.folders():  # each rank's, when the script started ranks
            announce_run_html(folder, report)
