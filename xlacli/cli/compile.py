"""``xlacli compile MODEL``: trace a model on an XLA device and report each graph."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from xlacli.cli import options

if TYPE_CHECKING:
    from xlacli.api import Run


def compile_command(
    ctx: typer.Context,
    model: options.Model = None,
    module: options.Module = None,
    steps: options.CompileSteps = None,
    warmup: options.CompileWarmup = None,
    train: options.Train = None,
    optimizer: options.Optimizer = None,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    max_compiles: Annotated[
        int | None,
        typer.Option(
            "--max-compiles",
            min=0,
            metavar="N",
            help="Fail (exit 1) above N compilations.",
            show_default=False,
        ),
    ] = None,
    fail_on_recompile: Annotated[
        bool,
        typer.Option("--fail-on-recompile", help="Fail (exit 1) on any steady-state recompile."),
    ] = False,
    devices: options.Devices = None,
    mode: options.Mode = options.RunMode.lazy,
    html: options.Html = False,
    hang_timeout: options.HangTimeout = None,
    ranks_timeout: options.RanksTimeout = 300.0,
    nproc: options.Nproc = None,
) -> int:
    """Trace MODEL lazily on an XLA device, dump IR and HLO, and report each graph.

    MODEL defines get_model() and get_inputs(step) (docs/model-file.md), or is a
    training script run as it is, whose own syncs are the steps. The run
    folder keeps, per graph, the IR with source locations, the HLO before and
    after optimization and XLA's buffer assignment. The report opens with its
    verdict: the steady-state recompiles, or none.
    """
    from xlacli import api
    from xlacli.cli.output import show_comparison, write_html

    if nproc is not None and nproc > 1:
        import sys

        from xlacli.flows.launch import run_under_torchrun

        return run_under_torchrun(nproc, sys.argv[1:], out)
    run_options = options.run_options(ctx)
    if mode is options.RunMode.both:
        comparison = api.compile_modes(options=run_options)
        show_comparison(comparison, output_format.value)
        runs = list(comparison.runs.values())
    else:
        run = api.compile_run(options=run_options)
        _show_run(run, output_format.value, ranks_timeout, hang_timeout)
        runs = [run]
    if html or output_format is options.OutputFormat.html:  # --format html: the page too
        write_html(runs)
    for run in runs:  # each mode's own error first (lazy first), then the budgets of each
        run.raise_error()
    for run in runs:
        for report in run.judged_reports():  # each rank's, when the script started ranks
            api.check_budgets(
                report, max_compiles=max_compiles, fail_on_recompile=fail_on_recompile
            )
    return 0


def _show_run(run: Run, output_format: str, ranks_timeout: float, hang: float | None) -> None:
    """The report on stdout; a run of several processes (launched, or the
    script's own): every rank's, merged, by the process that merges them."""
    from xlacli.flows.ranks import merge_processes
    from xlacli.render.compile_report import CompileReportView
    from xlacli.render.ranks import RanksView
    from xlacli.render.view import show

    ranks = merge_processes(
        run.run_dir,
        run.ranks,
        failed=run.error is not None,
        timeout_s=ranks_timeout,
        hang_timeout_s=hang,
    )
    if ranks is None:
        show(CompileReportView(run.report), output_format)
    elif ranks.merged is not None:  # each rank's run folder is under --out
        show(RanksView(ranks.merged, ranks.folder), output_format)
