"""``xlacli compile MODEL``: trace a model on an XLA device and report each graph."""

from __future__ import annotations

from typing import Annotated

import typer

import xlacli.defaults as defaults
from xlacli.cli import options


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

    MODEL defines get_model() and get_inputs(step) (see the README), or is a
    training script run as it is, whose own syncs are the steps. The run
    folder keeps, per graph, the IR with source locations, the HLO before and
    after optimization and XLA's buffer assignment. The report opens with its
    verdict: the steady-state recompiles, or none.
    """
    from xlacli.config import load_config
    from xlacli.flows.compile import CompileRequest, run_compile
    from xlacli.flows.session import configured_target

    if nproc is not None and nproc > 1:
        import sys

        from xlacli.flows.launch import run_under_torchrun

        return run_under_torchrun(nproc, sys.argv[1:], out)
    model, script_args = options.split_script_args(ctx, model, module)
    config = load_config()
    target = configured_target(model, module, script_args, config, "compile")
    request = CompileRequest(
        steps=steps if steps is not None or target.is_script else defaults.COMPILE.steps,
        train=bool(train),
        optimizer=(optimizer or options.OptimizerName.sgd).value,
        out=out,
        force=force,
        output_format=output_format.value,
        warmup=defaults.COMPILE.warmup if warmup is None else warmup,
        max_compiles=max_compiles,
        fail_on_recompile=fail_on_recompile,
        devices=devices,
        mode=mode.value,
        html=html or output_format is options.OutputFormat.html,  # --format html: the page too
        hang_timeout=hang_timeout,
        ranks_timeout=ranks_timeout,
    )
    return run_compile(target, request)
