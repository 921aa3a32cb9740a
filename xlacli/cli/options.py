"""Options shared by several commands, as ``Annotated`` types."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer


class OutputFormat(str, Enum):
    text = "text"
    json = "json"


class ReportFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


class OptimizerName(str, Enum):
    sgd = "sgd"
    adamw = "adamw"


class RunMode(str, Enum):
    lazy = "lazy"
    dynamo = "dynamo"
    both = "both"


Steps = Annotated[int, typer.Option("--steps", min=1, help="Number of steps to run.")]
Train = Annotated[
    bool,
    typer.Option(
        "--train",
        help="Run training steps (forward, loss, backward, optimizer) instead of inference.",
    ),
]
Optimizer = Annotated[OptimizerName, typer.Option("--optimizer", help="Optimizer for --train.")]
Out = Annotated[
    str | None,
    typer.Option(
        "--out", "-o", help="Run folder to create (default: a new one under .xlacli/runs/)."
    ),
]
Force = Annotated[
    bool, typer.Option("--force", help="Replace the --out folder if it already exists.")
]
Format = Annotated[
    OutputFormat,
    typer.Option("--format", help="text for people, json for programs (only JSON on stdout)."),
]
Devices = Annotated[
    int | None,
    typer.Option(
        "--devices",
        min=1,
        help="SPMD: run on N devices (N virtual devices on XLA:CPU; on a TPU, its own). "
        "Default: [tool.xlacli] devices, else the backend's.",
    ),
]
Warmup = Annotated[
    int,
    typer.Option(
        "--warmup",
        min=0,
        help="Steps whose compiles are expected (warm-up); a compile after them is a "
        "steady-state recompile.",
    ),
]
Mode = Annotated[
    RunMode,
    typer.Option(
        "--mode",
        help="lazy: torch_xla's lazy tracing; dynamo: the step (or forward) under "
        "torch.compile(backend='openxla'); both: each in its own run, compared.",
    ),
]
Html = Annotated[
    bool,
    typer.Option("--html", help="Also write a self-contained HTML report, RUN/report.html."),
]

HangTimeout = Annotated[
    float | None,
    typer.Option(
        "--hang-timeout",
        min=1,
        help="When no rank (or this one process) makes progress for S seconds: print "
        "every rank's stack and last step, then stop them all.",
        metavar="S",
    ),
]
RanksTimeout = Annotated[
    float,
    typer.Option(
        "--ranks-timeout",
        min=0,
        help="Under a launcher (torchrun, a pod): how long rank 0 waits for the other "
        "ranks' reports before merging without them.",
        metavar="S",
    ),
]
Nproc = Annotated[
    int | None,
    typer.Option(
        "--nproc",
        min=1,
        help="Run N processes under torchrun (torchrun --nproc_per_node N), one run "
        "folder each under --out, merged by rank 0.",
    ),
]

Module = Annotated[
    str | None,
    typer.Option(
        "--module",
        "-m",
        help="Run a module as a script, as python -m MODULE does (its argv after --).",
    ),
]
ScriptSteps = Annotated[
    int | None,
    typer.Option(
        "--steps",
        min=1,
        help="Steps to run (model file: default 2; a script stops after N steps, "
        "default: at its end).",
    ),
]
# Commands taking a script's arguments after ``--`` (they arrive in ``ctx.args``).
SCRIPT_ARGS_SETTINGS = {"allow_extra_args": True}


def split_script_args(
    ctx: typer.Context, model: str | None, module: str | None
) -> tuple[str | None, tuple[str, ...]]:
    """The target file and the program's arguments (everything after ``--``).

    With ``-m`` there is no file: click hands the first word after ``--`` to
    the MODEL argument, and it belongs to the program instead.
    """
    if module is not None and model is not None:
        return None, (model, *ctx.args)
    return model, tuple(ctx.args)
