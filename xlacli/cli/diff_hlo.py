"""``xlacli diff-hlo LEFT RIGHT``: a structural HLO diff naming the Python line of each change.

The command is thin and imports nothing heavy at start-up: the parser, the
diff and rich are imported when it runs, so ``xlacli --help`` stays fast.
Nothing it imports reaches torch or torch_xla.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from xlacli.cli import options
from xlacli.cli.output import write_output
from xlacli.errors import EXIT_CHECK_FAILED, EXIT_OK

if TYPE_CHECKING:
    from xlacli.render.diff import HloDiffView


class Stage(str, Enum):
    pre = "pre"
    post = "post"


def diff_hlo_command(
    left: Annotated[
        Path,
        typer.Argument(
            metavar="LEFT",
            help="The HLO before: a text file, an --xla_dump_to folder or an xlacli run folder.",
            show_default=False,
        ),
    ],
    right: Annotated[
        Path,
        typer.Argument(
            metavar="RIGHT",
            help="The HLO after: the same kind of input as LEFT; or, after a run folder, "
            "a graph's hash prefix.",
            show_default=False,
        ),
    ],
    right_graph: Annotated[
        str | None,
        typer.Argument(
            metavar="[GRAPH]",
            help="With RUN HASH HASH: two graphs of one run folder, by hash prefix.",
            show_default=False,
        ),
    ] = None,
    stage: Annotated[
        Stage,
        typer.Option(
            "--stage", help="For folders: HLO before (pre) or after (post) XLA's optimizations."
        ),
    ] = Stage.post,
    details: Annotated[
        bool, typer.Option("--details", help="List every change, not only the grouped patterns.")
    ] = False,
    output_format: options.FileFormat = None,
    output: options.Output = None,
) -> int:
    """Compare HLO by structure: what changed, and which line of Python caused it.

    Exits 0 when the programs are the same (renumbered or reordered counts as
    the same), 1 when they differ, 2 on bad input.
    """
    from xlacli import api
    from xlacli.paths import read_text_or_none
    from xlacli.render.diff import HloDiffView

    chosen = options.file_format(output_format, output)
    report = api.diff_hlo(left, right, right_graph, stage=stage.value)
    # Two run folders: also their memory and precision, graph by graph, and compile cost
    # by line. Imported only then: the run report's model is start-up that a diff of two
    # files does not need.
    memory = lines = None
    if left.is_dir() and right.is_dir() and report.modules:  # unrelated runs: no pairs
        runs = api.diff_run_folders(left, right)
        memory, lines = runs.memory, runs.lines
    view = HloDiffView(report, details, memory, lines, read=read_text_or_none)
    _write_diff(view, chosen, output)
    return EXIT_OK if report.identical else EXIT_CHECK_FAILED


def _write_diff(view: HloDiffView, chosen: str, output: Path | None) -> None:
    """The diff as text, JSON or its page, on stdout or into ``output``."""
    from xlacli.render.console import PIPE_WIDTH
    from xlacli.render.view import render, show

    if output is None:
        show(view, chosen)
    else:
        write_output(render(view, chosen, width=PIPE_WIDTH), output)
