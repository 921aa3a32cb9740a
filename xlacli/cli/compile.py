"""``xlacli compile MODEL``: trace a model on an XLA device and report each graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options


def compile_command(
    ctx: typer.Context,
    model: Annotated[
        str | None,
        typer.Argument(
            metavar="MODEL",
            help="Model file (PATH.py, PATH.py:FACTORY) or training script; "
            "a script's arguments follow --.",
        ),
    ] = None,
    module: options.Module = None,
    steps: options.ScriptSteps = None,
    train: options.Train = False,
    optimizer: options.Optimizer = options.OptimizerName.sgd,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    warmup: options.Warmup = 2,
    max_compiles: Annotated[
        int | None,
        typer.Option("--max-compiles", min=0, help="Fail (exit 1) above this many compilations."),
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

    MODEL defines get_model() and get_inputs(step) (see the README), or is a
    training script run as it is (xlacli compile train.py -- --lr 0.1; or
    -m package.module), whose own syncs are the steps. The run
    folder keeps, per graph, the IR with source locations, the HLO before and
    after optimization and XLA's buffer assignment.
    """
    from xlacli.analysis.budgets import check_budgets
    from xlacli.config import load_config
    from xlacli.flows.compare import raise_first_error
    from xlacli.flows.ranks import finish_rank, launched_rank
    from xlacli.flows.session import capture, resolve_target
    from xlacli.render.compile_report import render_compile_report

    if nproc is not None and nproc > 1:
        import sys

        from xlacli.flows.launch import run_under_torchrun

        return run_under_torchrun(nproc, sys.argv[1:], out)
    model, script_args = options.split_script_args(ctx, model, module)
    target = resolve_target(model, module, script_args)
    devices = devices if devices is not None else load_config().devices
    if mode is options.RunMode.both:
        from xlacli.flows.compare import compare_compile
        from xlacli.flows.launch import refuse_under_launcher

        refuse_under_launcher("--mode both")
        from xlacli.flows.modes import check_mode

        check_mode(target, "dynamo")  # before the lazy run, not after it
        results = compare_compile(
            target,
            out=Path(out) if out else None,
            force=force,
            output_format=output_format.value,
            steps=steps,
            train=train,
            optimizer=optimizer.value,
            explain_warmup=warmup,
            devices=devices,
        )
    else:
        result = capture(
            target,
            steps=steps,
            train=train,
            optimizer=optimizer.value,
            out=Path(out) if out else None,
            force=force,
            label=f"Compiling {target.module or target.path.name}",
            explain_warmup=warmup,
            devices=devices,
            mode=mode.value,
            hang_timeout=hang_timeout,
        )
        place = launched_rank()
        if place is None:
            render_compile_report(result.report, output_format.value)
        else:  # one run folder per rank; rank 0 prints them merged
            finish_rank(
                place,
                result.paths.root.parent,
                failed=result.error is not None,
                output_format=output_format.value,
                timeout_s=ranks_timeout,
                hang_timeout_s=hang_timeout,
            )
        results = [result]
    if html:
        from xlacli.render.html.run_page import announce_run_html

        for result in results:
            announce_run_html(result.paths.root, result.report)
    raise_first_error(results)  # each mode's own error first, then the budgets of each
    for result in results:
        check_budgets(result.report, max_compiles=max_compiles, fail_on_recompile=fail_on_recompile)
    return 0
