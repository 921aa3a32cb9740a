"""``xlacli profile MODEL --steps 50``: TensorBoard traces and a headless summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

import xlacli.defaults as defaults
from xlacli.cli import options


def profile_command(
    ctx: typer.Context,
    model: options.Model = None,
    module: options.Module = None,
    steps: Annotated[
        int | None, options.steps_option(defaults.PROFILE, "Steps to profile, after the warm-up.")
    ] = None,
    warmup: Annotated[
        int | None,
        options.warmup_option(
            defaults.PROFILE, "Steps run first, untraced, so that compiles happen."
        ),
    ] = None,
    train: options.Train = None,
    optimizer: options.Optimizer = None,
    logdir: Annotated[
        Path | None,
        typer.Option(
            "--logdir",
            metavar="DIR",
            help="TensorBoard logdir." + options.shown("RUN/tensorboard"),
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="The profile session's name." + options.shown("the run folder's"),
            show_default=False,
        ),
    ] = None,
    tensorboard: Annotated[
        bool, typer.Option("--tensorboard", help="Serve the trace with TensorBoard on localhost.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", metavar="PORT", help="Port for --tensorboard.")
    ] = 6006,
    max_trace_steps: Annotated[
        int,
        typer.Option(
            "--max-trace-steps",
            min=1,
            metavar="N",
            help="Trace at most N steps; later steps run untraced (bounds memory).",
        ),
    ] = 500,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    devices: options.Devices = None,
    mode: options.Mode = options.RunMode.lazy,
    html: options.Html = False,
    hang_timeout: options.HangTimeout = None,
    ranks_timeout: options.RanksTimeout = 300.0,
) -> int:
    """Profile MODEL's steps with torch_xla's profiler and summarize where the time goes.

    The trace is written where TensorBoard and xprof read it
    (LOGDIR/plugins/profile/NAME/*.xplane.pb); the summary needs no UI.
    """
    from xlacli.flows.profile import ProfileRequest, run_profile

    model, script_args = options.split_script_args(ctx, model, module)
    return run_profile(
        ProfileRequest(
            model=model,
            steps=steps,
            warmup=warmup,
            train=bool(train),
            optimizer=(optimizer or options.OptimizerName.sgd).value,
            logdir=logdir,
            name=name,
            tensorboard=tensorboard,
            port=port,
            out=out,
            force=force,
            output_format=output_format.value,
            devices=devices,
            max_trace_steps=max_trace_steps,
            mode=mode.value,
            html=html or output_format is options.OutputFormat.html,
            module=module,
            script_args=script_args,
            hang_timeout=hang_timeout,
            ranks_timeout=ranks_timeout,
        )
    )
