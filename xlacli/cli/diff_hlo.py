"""``xlacli diff-hlo LEFT RIGHT``: a structural HLO diff naming the Python line of each change.

The command is thin and imports nothing heavy at start-up: the parser, the
diff and rich are imported when it runs, so ``xlacli --help`` stays fast.
Nothing it imports reaches torch or torch_xla.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from xlacli.cli import options
from xlacli.cli.output import write_output
from xlacli.errors import EXIT_CHECK_FAILED, EXIT_OK

if TYPE_CHECKING:
    from xlacli.analysis.memory.compare import GraphMemoryChange
    from xlacli.hlo.changes import DiffReport
    from xlacli.render.line_growth import LineChange


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

    chosen = options.file_format(output_format, output)
    report = api.diff_hlo(left, right, right_graph, stage=stage.value)
    # Two run folders: also their memory and precision, graph by graph. Imported only
    # then: the run report's model is start-up that a diff of two files does not need.
    memory = lines = None
    if left.is_dir() and right.is_dir() and report.modules:  # unrelated runs: no pairs
        from xlacli.render.line_growth import run_line_changes
        from xlacli.render.memory_compare import run_folder_changes

        memory = run_folder_changes(left, right)
        lines = run_line_changes(left, right)  # compile cost by line: which lines grew
    if chosen == "html":
        from xlacli.render.html.diff_page import diff_page_html, write_diff_html

        if output is None:
            sys.stdout.write(diff_page_html(report))
        else:
            print(write_diff_html(report, output))
    else:
        _write_diff(report, DiffExtras(memory, lines), chosen, details, output)
    return EXIT_OK if report.identical else EXIT_CHECK_FAILED


@dataclass(frozen=True)
class DiffExtras:
    """What two run folders add to their diff: memory and compile cost by line."""

    memory: list[GraphMemoryChange] | None = None
    lines: list[LineChange] | None = None  # compile cost by line; None for files or dumps


def _write_diff(
    report: DiffReport, extras: DiffExtras, chosen: str, details: bool, output: Path | None
) -> None:
    """The diff as text or JSON, on stdout or into ``output``."""
    from rich.console import Console

    from xlacli.render.console import PIPE_WIDTH, stdout_console, trimmed
    from xlacli.render.hlo_diff import render_hlo_diff, render_hlo_diff_json
    from xlacli.render.line_growth import line_changes_text, with_line_changes
    from xlacli.render.memory_compare import memory_comparison_text, with_memory_comparison

    if chosen == "json":
        text = render_hlo_diff_json(report)
        if extras.memory:
            text = with_memory_comparison(text, extras.memory)
        if extras.lines is not None:
            text = with_line_changes(text, extras.lines)
        write_output(text, output)
        return
    buffer = io.StringIO()
    console = (
        stdout_console()
        if output is None
        else Console(file=buffer, width=PIPE_WIDTH, highlight=False, color_system=None)
    )
    with trimmed(console):
        render_hlo_diff(report, console, details=details)
        if extras.memory:
            console.print(memory_comparison_text(extras.memory))
        if extras.lines is not None:
            console.print(line_changes_text(extras.lines))
    if output is not None:
        write_output(buffer.getvalue(), output)
