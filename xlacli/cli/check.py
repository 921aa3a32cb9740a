"""``xlacli check [MODEL] --baseline FILE``: a CI gate on compile counts."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import xlacli.defaults as defaults
from xlacli.cli import options
from xlacli.errors import EXIT_CHECK_FAILED, XlacliError, internal_error

if TYPE_CHECKING:
    from xlacli.api import CheckRun


def check_command(
    ctx: typer.Context,
    model: options.Model = None,
    module: options.Module = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Baseline JSON file." + options.shown("[tool.xlacli] baseline"),
            show_default=False,
        ),
    ] = None,
    update_baseline: Annotated[
        bool, typer.Option("--update-baseline", help="Write the baseline from this run.")
    ] = False,
    allow_improvements: Annotated[
        bool,
        typer.Option(
            "--allow-improvements", help="Pass when counts went down (else: ask for an update)."
        ),
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option(
            "--tolerance",
            min=0.0,
            metavar="FRACTION",
            help="Allowed relative change of each count (0.05 = 5%).",
        ),
    ] = 0.0,
    time_budget: Annotated[
        float | None,
        typer.Option(
            "--time-budget",
            min=0.0,
            metavar="SECONDS",
            help="Fail when total compile time exceeds SECONDS.",
            show_default=False,
        ),
    ] = None,
    time_tolerance: Annotated[
        float,
        typer.Option(
            "--time-tolerance",
            min=0.0,
            metavar="FRACTION",
            help="Slack on --time-budget (0.2 = 20%).",
        ),
    ] = 0.2,
    steps: Annotated[
        int | None,
        options.steps_option(
            defaults.CHECK,
            "Steps to run, warm-up included.",
            configured="the baseline's, else [tool.xlacli] steps",
        ),
    ] = None,
    warmup: Annotated[
        int | None,
        options.warmup_option(
            defaults.CHECK,
            "Warm-up steps, whose compiles are expected.",
            configured="the baseline's, else [tool.xlacli] warmup",
        ),
    ] = None,
    train: options.Train = None,
    optimizer: options.Optimizer = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Write JUnit XML here, one test case per check.",
            show_default=False,
        ),
    ] = None,
    github: Annotated[
        bool,
        typer.Option(
            "--github", help="GitHub Actions: annotations at your lines and a step summary."
        ),
    ] = False,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    devices: options.Devices = None,
    mode: Annotated[
        options.RunMode | None,
        typer.Option(
            "--mode",
            help="lazy, or dynamo: the step under torch.compile."
            + options.shown("the baseline's, else lazy"),
            show_default=False,
        ),
    ] = None,
    html: options.Html = False,
    hang_timeout: options.HangTimeout = None,
    ranks_timeout: options.RanksTimeout = 300.0,
    nproc: options.Nproc = None,
) -> int:
    """Run MODEL and compare its compile counts with a committed baseline.

    Exit 0 when nothing changed, 1 on a regression (or an improvement, until the
    baseline is updated), 2 for a missing or bad baseline.
    """
    from xlacli import api

    if nproc is not None and nproc > 1:
        import sys

        from xlacli.flows.launch import run_under_torchrun

        return run_under_torchrun(nproc, sys.argv[1:], out)
    html = html or output_format is options.OutputFormat.html  # --format html: the page too
    shown = _CheckShown(output_format.value, junit, github, allow_improvements, html)
    checked: CheckRun | None = None
    try:  # a check that cannot run still tells CI why (JUnit, annotations, check.json)
        checked = api.check(
            options=options.run_options(ctx),
            baseline=baseline or None,
            update_baseline=update_baseline,
            tolerance=tolerance,
            time_budget=time_budget,
            time_tolerance=time_tolerance,
        )
        _show_check(checked, shown, ranks_timeout, hang_timeout)
    except XlacliError as error:
        if error.exit_code != EXIT_CHECK_FAILED:
            _report_error_to_ci(error, shown)
        raise
    except Exception as error:  # a bug in xlacli: CI is still told, in every output
        failed = internal_error(error, "checking")
        if checked is not None:
            _save_error(failed, checked)
        _report_error_to_ci(failed, shown)
        raise failed from None
    return 0


def _save_error(error: XlacliError, checked: CheckRun) -> None:
    """Keep why the check failed in its run folder (``check.json``)."""
    from xlacli.render.check import check_error_json
    from xlacli.report.check import save_check

    folder = Path(checked.report.run_dir)
    if folder.is_dir():
        with contextlib.suppress(OSError):
            save_check(check_error_json(error, checked.report, checked.baseline_path), folder)


@dataclass(frozen=True)
class _CheckShown:
    """How a check is shown: on stdout, and to CI."""

    output_format: str
    junit: Path | None
    github: bool
    allow_improvements: bool
    html: bool

    @property
    def to_stderr(self) -> bool:
        """GitHub's workflow commands go to stdout, unless it is reserved for JSON."""
        return self.output_format == "json"


def _show_check(
    checked: CheckRun, shown: _CheckShown, ranks_timeout: float, hang: float | None
) -> None:
    """Judge each run this process holds (one; or each rank the script started,
    the first printing and writing the shared files), then, for a run of several
    processes, the ranks together, by the process that merges them.

    Raises:
        XlacliError: the first run's error or failure, else the ranks' (a divergence).
    """
    from xlacli.flows.ranks import check_done, check_ranks, launched_rank, merge_processes
    from xlacli.render.ranks import RanksView
    from xlacli.render.view import show

    place = launched_rank()
    judged = checked.rank_checks or {0: checked}
    first = min(judged)
    failure: XlacliError | None = None
    for rank, rank_check in judged.items():
        try:
            _judge(rank_check, shown, merger=rank == first and (place is None or place.is_merger))
        except XlacliError as error:
            failure = failure or error
    ranks = merge_processes(
        Path(checked.report.run_dir),
        checked.ranks,
        failed=failure is not None,
        timeout_s=ranks_timeout,
        hang_timeout_s=hang,
        done=check_done(updating=checked.updating),
    )
    if ranks is not None and ranks.merged is not None:
        show(RanksView(ranks.merged, ranks.folder), shown.output_format)
    if failure is not None:
        raise failure
    if ranks is not None and ranks.merged is not None:
        check_ranks(ranks.merged, ranks.folder)


def _judge(checked: CheckRun, shown: _CheckShown, *, merger: bool) -> None:
    """Print the outcome (only the merger prints and writes the shared files)."""
    from xlacli.api import Run
    from xlacli.cli.output import write_github, write_html, write_junit
    from xlacli.paths import display_path
    from xlacli.render.check import CheckView
    from xlacli.render.console import print_message
    from xlacli.render.view import show
    from xlacli.units import counted

    run = Run(checked.report, checked.error)
    html = [run] if shown.html else []
    if checked.outcome is None:  # the run failed, or it wrote the baseline
        write_html(html)
        run.raise_error()
        if (written := checked.written) is not None:
            print_message(
                f"Baseline written to {display_path(checked.baseline_path)}: "
                f"{counted(written.compilations, 'compilation')}, "
                f"{counted(written.distinct_graphs, 'graph')}. Commit it."
            )
        return
    outcome = checked.outcome
    if merger:  # the other ranks' outcomes are in their folders
        show(CheckView(outcome, checked.report, checked.baseline_path), shown.output_format)
    write_html(html)
    if shown.junit is not None and merger:
        write_junit(outcome, shown.junit, allow_improvements=shown.allow_improvements)
    if shown.github and merger:
        write_github(outcome, checked.report, to_stderr=shown.to_stderr)
    failure = checked.failure(shown.allow_improvements)
    if failure is not None:
        raise failure


def _report_error_to_ci(error: XlacliError, shown: _CheckShown) -> None:
    from xlacli.cli.output import write_github_error, write_junit_error

    if shown.junit is not None:
        with contextlib.suppress(XlacliError):  # the error being reported matters more
            write_junit_error(error, shown.junit)
    if shown.github:
        write_github_error(error, to_stderr=shown.to_stderr)
