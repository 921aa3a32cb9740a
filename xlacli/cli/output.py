"""Where a command's report goes: stdout, or the ``--output`` file; runs shown; a check's
CI files (``--junit``, ``--github``'s step summary)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from xlacli.paths import write_text_file

if TYPE_CHECKING:
    from xlacli.analysis.check.checks import CheckOutcome
    from xlacli.api import ModeComparison, Run
    from xlacli.errors import XlacliError
    from xlacli.report.run_report import RunReport


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
    from xlacli.render.compare import ComparisonView
    from xlacli.render.view import show
    from xlacli.report.profile import summary_to_dict

    profiles = {mode: summary_to_dict(s) for mode, s in comparison.profiles.items()}
    extra = {"profiles": profiles} if profiles else None
    reports = {mode: run.report for mode, run in comparison.runs.items()}
    show(ComparisonView(reports, comparison.figures, command, extra), output_format)


def write_html(runs: Iterable[Run]) -> None:
    """``--html``: each run's page, ``RUN/report.html``, named on stderr."""
    from rich.markup import escape

    from xlacli import api
    from xlacli.paths import display_path
    from xlacli.render.console import print_message

    for run in runs:
        for folder, report in run.folders():  # each rank's, when the script started ranks
            path = api.write_html(folder, report=report)
            print_message(f"HTML report: [bold]{escape(display_path(path))}[/]")


def write_junit(outcome: CheckOutcome, path: Path, *, allow_improvements: bool = False) -> None:
    """``--junit FILE``: the check as JUnit XML.

    Raises:
        UsageError: the file cannot be written.
    """
    from xlacli.render.ci import junit_xml

    _write_junit_file(junit_xml(outcome, allow_improvements=allow_improvements), path)


def write_junit_error(error: XlacliError, path: Path) -> None:
    """``--junit FILE`` for a check that could not run."""
    from xlacli.render.ci import junit_error_xml

    _write_junit_file(junit_error_xml(error), path)


def _write_junit_file(xml: str, path: Path) -> None:
    from xlacli.errors import UsageError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(xml, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write --junit {path}: {error.strerror}") from None


def write_github(outcome: CheckOutcome, report: RunReport, *, to_stderr: bool = False) -> None:
    """``--github``: annotations at the user's lines and a Markdown step summary."""
    from xlacli.render.ci import github_commands, markdown_summary

    out = sys.stderr if to_stderr else sys.stdout
    for line in github_commands(outcome, report):
        print(line, file=out, flush=True)
    append_step_summary(markdown_summary(outcome, report))


def write_github_error(error: XlacliError, *, to_stderr: bool = False) -> None:
    """``--github`` for a check that could not run: an ``::error`` and a step summary."""
    from xlacli.render.ci import error_summary, github_error_command

    print(github_error_command(error), file=sys.stderr if to_stderr else sys.stdout, flush=True)
    append_step_summary(error_summary(error))


def append_step_summary(markdown: str) -> None:
    """Append to the file GitHub names in GITHUB_STEP_SUMMARY; a missing or
    unwritable one is a warning, never the check's failure."""
    from rich.markup import escape

    from xlacli.render.console import stderr_console

    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary:
        stderr_console().print("[yellow]warning:[/] --github: GITHUB_STEP_SUMMARY is not set")
        return
    try:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as error:
        stderr_console().print(
            f"[yellow]warning:[/] --github: cannot write the step summary {escape(summary)}: "
            f"{escape(error.strerror or str(error))}"
        )
