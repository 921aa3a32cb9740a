"""``xlacli profile MODEL --steps 50``: TensorBoard traces and a headless summary."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options


def profile_command(
    ctx: typer.Context,
    model: Annotated[
        str | None,
        typer.Argument(
            metavar="MODEL",
            help="Model file or training script (default: [tool.xlacli] model); "
            "a script's arguments follow --.",
        ),
    ] = None,
    module: options.Module = None,
    steps: Annotated[
        int | None, typer.Option("--steps", min=1, help="Steps to profile (default 50).")
    ] = None,
    warmup: Annotated[
        int | None,
        typer.Option(
            "--warmup", min=0, help="Steps run first, untraced, so compiles happen (default 5)."
        ),
    ] = None,
    train: options.Train = False,
    optimizer: options.Optimizer = options.OptimizerName.sgd,
    logdir: Annotated[
        Path | None,
        typer.Option("--logdir", help="TensorBoard logdir (default: RUN/tensorboard)."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="The profile session's name (default: the run folder's)."),
    ] = None,
    tensorboard: Annotated[
        bool, typer.Option("--tensorboard", help="Serve the trace with TensorBoard on localhost.")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="Port for --tensorboard.")] = 6006,
    max_trace_steps: Annotated[
        int,
        typer.Option(
            "--max-trace-steps",
            min=1,
            help="Trace at most this many steps; later steps run untraced (bounds memory).",
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
            train=train,
            optimizer=optimizer.value,
            logdir=logdir,
            name=name,
            tensorboard=tensorboard,
            port=port,
            out=Path(out) if out else None,
            force=force,
            output_format=output_format.value,
            devices=devices,
            max_trace_steps=max_trace_steps,
            mode=mode.value,
            html=html,
            module=module,
            script_args=script_args,
            hang_timeout=hang_timeout,
            ranks_timeout=ranks_timeout,
        )
    )
