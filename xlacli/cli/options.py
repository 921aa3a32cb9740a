"""Options shared by the commands, declared once as ``Annotated`` types.

One flag, one meaning in every command (``tests/unit/test_cli_options.py``
walks the commands and checks it): ``--out`` is always the run folder a run
creates, ``--output`` the file a command writes, ``--format`` what it prints.
Defaults come from ``xlacli.defaults`` and every help page shows them.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

import xlacli.defaults as defaults
from xlacli.errors import UsageError
from xlacli.run_options import RunOptions


class OutputFormat(str, Enum):
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


# Every help page ends with its exit codes and two examples (click keeps
# paragraphs after \b as they are written).
EXIT_CODES = (
    "Exit codes: 0 ok; 1 a check or budget failed (diff-hlo: the programs differ); "
    "2 usage error; 3 the model failed; 4 environment or capture failure; "
    "5 the report is incomplete (an analysis failed); 6 no step ran; 130 interrupted."
)


def epilog(*examples: str) -> str:
    """A help page's closing: examples, one a line, then the exit codes."""
    lines = "\n".join(f"  {example}" for example in examples)
    return f"\b\nExamples:\n{lines}\n\n{EXIT_CODES}"


def shown(value: object) -> str:
    """A default that is not the parameter's own value (None: "the command's"),
    written as click writes the others (its ``show_default`` string would be
    put in parentheses)."""
    return f"  [default: {value}]"


Model = Annotated[
    str | None,
    typer.Argument(
        metavar="MODEL",
        help="Model file (PATH.py, PATH.py:FACTORY) or training script, its arguments "
        "after --." + shown("[tool.xlacli] model"),
        show_default=False,
    ),
]
Module = Annotated[
    str | None,
    typer.Option(
        "--module",
        "-m",
        metavar="MODULE",
        help="Run a module as a script, as python -m MODULE does (its argv after --).",
    ),
]


# More steps than any run could reach: a typo (or 10**20 read back as a float).
MAX_STEPS = 1_000_000_000


def steps_option(
    default: defaults.StepDefaults,
    what: str,
    *,
    configured: str | None = None,
) -> object:
    """``--steps`` with the command's default shown, all of it in the default:
    where it comes from first (``configured``: "the baseline's, else [tool.xlacli]
    steps"), the number, and a script's own (a script without ``--steps`` runs to
    its end, but for a profile), so the help never says two defaults apart."""
    value = f"{configured}, else {default.steps}" if configured else str(default.steps)
    if default.script_to_end:
        value += "; a script runs to its end"
    return typer.Option(
        "--steps", min=1, max=MAX_STEPS, metavar="N", help=what + shown(value), show_default=False
    )


def warmup_option(
    default: defaults.StepDefaults, what: str, *, configured: str | None = None
) -> object:
    """``--warmup`` with the command's default shown (``configured`` as for ``--steps``)."""
    value = f"{configured}, else {default.warmup}" if configured else str(default.warmup)
    return typer.Option(
        "--warmup", min=0, metavar="N", help=what + shown(value), show_default=False
    )


CompileSteps = Annotated[
    int | None, steps_option(defaults.COMPILE, "Steps to run, warm-up included.")
]
CompileWarmup = Annotated[
    int | None,
    warmup_option(
        defaults.COMPILE,
        "Steps whose compiles are expected; a compile after them is a steady-state recompile.",
    ),
]
Train = Annotated[
    bool | None,
    typer.Option(
        "--train/--no-train",
        help="Training steps (forward, loss, backward, optimizer) or inference."
        + shown("inference; check: the baseline's"),
        show_default=False,
    ),
]
Optimizer = Annotated[
    OptimizerName | None,
    typer.Option(
        "--optimizer",
        help="Optimizer for --train." + shown("sgd; check: the baseline's"),
        show_default=False,
    ),
]
Out = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        metavar="DIR",
        help="Run folder to create." + shown("a new one under .xlacli/runs/"),
        show_default=False,
    ),
]
Force = Annotated[
    bool, typer.Option("--force", help="Replace the --out folder if it already exists.")
]
Format = Annotated[
    OutputFormat,
    typer.Option(
        "--format",
        help="text for people, json for programs (only JSON on stdout); html: the text "
        "report and RUN/report.html, as --html.",
    ),
]
Output = Annotated[
    Path | None,
    typer.Option(
        "--output",
        metavar="FILE",
        help="Write the report to FILE instead of stdout; its suffix (.txt, .json, .html) "
        "sets --format when that is not given." + shown("stdout"),
        show_default=False,
    ),
]
FileFormat = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format",
        help="text for people, json for programs, html for a page."
        + shown("text, or --output's suffix"),
        show_default=False,
    ),
]
Devices = Annotated[
    int | None,
    typer.Option(
        "--devices",
        min=1,
        metavar="N",
        help="SPMD: run on N devices (N virtual devices on XLA:CPU; on a TPU, its own)."
        + shown("[tool.xlacli] devices, else the backend's"),
        show_default=False,
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
        "every rank's stack and last step, then stop them all." + shown("no watchdog"),
        metavar="S",
        show_default=False,
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
        "folder each under --out, merged by rank 0." + shown("one process"),
        metavar="N",
        show_default=False,
    ),
]

# Commands taking a script's arguments after ``--`` (they arrive in ``ctx.args``).
SCRIPT_ARGS_SETTINGS = {"allow_extra_args": True}
_SUFFIX_FORMATS = {".json": "json", ".html": "html", ".htm": "html", ".txt": "text"}


def file_format(chosen: OutputFormat | None, output: Path | None) -> str:
    """The format to write: ``--format``, else ``--output``'s suffix, else text.
    Never ignores an option: a suffix that contradicts ``--format`` is refused.

    Raises:
        UsageError: ``--format`` and ``--output``'s suffix disagree.
    """
    implied = _SUFFIX_FORMATS.get(output.suffix.lower()) if output is not None else None
    if chosen is None:
        return implied or "text"
    if implied is not None and implied != chosen.value:
        raise UsageError(
            f"--format {chosen.value} but --output {output} names a .{implied} file",
            hint=f"drop --format (the suffix decides), or name a .{chosen.value} file",
        )
    return chosen.value


def run_options(ctx: typer.Context) -> RunOptions:
    """The run's options from a command's flags, each by its name (``--steps`` is
    ``steps``; MODEL is ``target``, what follows ``--`` is ``args``).

    Raises:
        UsageError: a value no run could take.
    """
    flags = ctx.params  # as click parsed them: enums and paths still as text
    target, args = split_script_args(ctx, flags.get("model"), flags.get("module"))
    chosen = {
        field.name: flags[field.name].value
        if isinstance(flags[field.name], Enum)
        else flags[field.name]
        for field in dataclasses.fields(RunOptions)
        if field.name in flags
    }
    out = chosen.get("out")
    return RunOptions(
        **{**chosen, "target": target, "args": args, "out": None if out is None else Path(out)}
    )


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
