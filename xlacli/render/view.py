"""One contract for every view: a view renders one report into a format.

A view is built from a report (a run's, a profile's, a check's, a diff's...) and
renders it as text for a terminal (``text``: blocks for a console of a width) or
as JSON for programs (``json``: the whole document, sorted keys); a view that
has a page renders it as HTML too (``html``; for a view without one, ``html`` shows
its text: the command writes the run's page apart). Which format a command asked
for is decided here, once (``render``, ``show``); a view reads no file and writes
none: loading and saving live beside the report (``report/``, ``flows/``).
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from rich.console import Console, RenderableType
from rich.text import Text

from xlacli.render.console import PIPE_WIDTH, stdout_console, trimmed


@dataclass(frozen=True)
class Whole:
    """A line printed soft-wrapped: a command stays whole whatever the width."""

    line: Text


Block = RenderableType | Whole


class View(Protocol):
    """A report as a terminal shows it and as programs read it."""

    def text(self, width: int) -> Sequence[Block]:
        """The blocks a console ``width`` columns wide prints, in order."""
        ...

    def json(self) -> str:
        """The whole JSON document, keys sorted, ending in a newline."""
        ...


@runtime_checkable
class Page(Protocol):
    """A view that has an HTML page."""

    def html(self) -> str:
        """The whole page."""
        ...


def show(view: View, output_format: str, console: Console | None = None) -> None:
    """Print ``view`` on stdout: JSON alone, or text with no line ending in spaces."""
    if output_format == "json":
        sys.stdout.write(view.json())
        return
    if output_format == "html" and isinstance(view, Page):
        sys.stdout.write(view.html())
        return
    console = console or stdout_console()  # html of a view without a page: its text
    with trimmed(console):
        for block in view.text(console.width):
            if isinstance(block, Whole):
                console.print(block.line, soft_wrap=True)
            else:
                console.print(block)


def render(view: View, output_format: str, width: int | None = None) -> str:
    """``view`` as a string (for ``--output FILE`` or a pipe): without colours, ``width``
    columns wide (default: as stdout's console when piped)."""
    if output_format == "json":
        return view.json()
    if output_format == "html" and isinstance(view, Page):
        return view.html()
    buffer = io.StringIO()
    width = width or _piped_width()
    show(view, output_format, Console(file=buffer, width=width, highlight=False, color_system=None))
    return buffer.getvalue()


def _piped_width() -> int:
    """The width stdout's console takes when it is not a terminal."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() else PIPE_WIDTH
