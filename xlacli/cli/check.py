"""``xlacli check [MODEL] --baseline FILE``: a CI gate on compile counts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import xlacli.defaults as defaults
from xlacli.cli import options


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
            defaults.CHECK, "Steps to run, warm-up included (else [tool.xlacli] steps)."
        ),
    ] = None,
    warmup: Annotated[
        int | None,
        options.warmup_option(
            defaults.CHECK,
            "Warm-up steps, whose compiles are expected (else [tool.xlacli] warmup).",
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
    from xlacli.flows.check import CheckRequest, run_check

    if nproc is not None and nproc > 1:
        import sys

        from xlacli.flows.launch import run_under_torchrun

        return run_under_torchrun(nproc, sys.argv[1:], out)
    model, script_args = options.split_script_args(ctx, model, module)
    return run_check(
        CheckRequest(
            model=model,
            baseline=Path(baseline) if baseline else None,
            update_baseline=update_baseline,
            allow_improvements=allow_improvements,
            tolerance=tolerance,
            time_budget=time_budget,
            time_tolerance=time_tolerance,
            steps=steps,
            warmup=warmup,
            train=train,
            optimizer=optimizer.value if optimizer else None,
            junit=junit,
            github=github,
            out=out,
            force=force,
            output_format=output_format.value,
            devices=devices,
            mode=mode.value if mode else None,
            html=html or output_format is options.OutputFormat.html,
            module=module,
            script_args=script_args,
            hang_timeout=hang_timeout,
            ranks_timeout=ranks_timeout,
        )
    )
