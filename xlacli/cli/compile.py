"""``xlacli compile MODEL``: trace a model on an XLA device and report each graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from xlacli.cli import options


def compile_command(
    model: Annotated[str, typer.Argument(help="Model file, PATH.py or PATH.py:FACTORY.")],
    steps: options.Steps = 2,
    train: options.Train = False,
    optimizer: options.Optimizer = options.OptimizerName.sgd,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
) -> int:
    """Trace MODEL lazily on an XLA device, dump IR and HLO, and report each graph."""
    from xlacli.commands.compile import run_compile

    return run_compile(
        model=model,
        steps=steps,
        train=train,
        optimizer=optimizer,
        out=Path(out) if out else None,
        force=force,
        output_format=output_format,
    )
