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
) -> int:
    """Trace MODEL lazily on an XLA device, dump IR and HLO, and report each graph.

    MODEL defines get_model() and get_inputs(step) (see the README), or is a
    training script run as it is (xlacli compile train.py -- --lr 0.1; or
    -m package.module), whose own syncs are the steps. The run
    folder keeps, per graph, the IR with source locations, the HLO before and
    after optimization and XLA's buffer assignment.
    """
    from xlacli.flows.compile import CompileRequest, run_compile
    from xlacli.flows.session import resolve_target

    model, script_args = options.split_script_args(ctx, model, module)
    target = resolve_target(model, module, script_args)
    request = CompileRequest(
        steps=steps,
        train=train,
        optimizer=optimizer.value,
        out=Path(out) if out else None,
        force=force,
        output_format=output_format.value,
        warmup=warmup,
        max_compiles=max_compiles,
        fail_on_recompile=fail_on_recompile,
        devices=devices,
        mode=mode.value,
        html=html,
    )
    return run_compile(target, request)
