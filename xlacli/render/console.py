"""The consoles: data on stdout, progress and messages on stderr."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from xlacli.errors import XlacliError

# Piped or redirected output has no width: wide enough for the tables, so a
# file or a CI log holds whole rows.
PIPE_WIDTH = 160


# Spaces at the end of a line, before any closing style codes.
_TRAILING = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


class TrimmedLines:
    """A text stream that drops the spaces rich pads a table's last column and
    its blocks with at the end of each line (data on stdout is diffed, grepped
    and pasted). The last, unfinished line waits for its newline or a flush."""

    def __init__(self, target: IO[str]):
        self.target = target
        self._pending = ""

    def write(self, text: str) -> int:
        lines, newline, self._pending = (self._pending + text).rpartition("\n")
        if newline:
            self.target.write(_TRAILING.sub(r"\1", lines) + newline)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.target.write(_TRAILING.sub(r"\1", self._pending))
            self._pending = ""
        self.target.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding...
        return getattr(self.target, name)


def stdout_console() -> Console:
    """A console for data (tables, reports) on stdout."""
    console = Console(file=TrimmedLines(sys.stdout), highlight=False, soft_wrap=False)  # type: ignore[arg-type]
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = PIPE_WIDTH
    return console


# Spaces at a line's end, before any closing style codes (rich pads cells and
# wrapped lines to the console's width).
_TRAILING_SPACE = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.M)


def print_trimmed(console: Console, renderable: object, **options: object) -> None:
    """Print as ``console.print`` does, with no line ending in spaces."""
    with trimmed(console):
        console.print(renderable, **options)  # type: ignore[arg-type]


@contextmanager
def trimmed(console: Console) -> Iterator[None]:
    """Everything printed on ``console`` inside, with no line ending in spaces
    (a copied or logged report carries none)."""
    with console.capture() as captured:
        yield
    console.file.write(_TRAILING_SPACE.sub(r"\1", captured.get()))


def stderr_console() -> Console:
    """A console for progress and messages on stderr."""
    return Console(file=sys.stderr, highlight=False, soft_wrap=True)


def print_error(error: XlacliError) -> None:
    """Print an expected error as one line, then its details and hint."""
    err = stderr_console()
    err.print(f"[bold red]xlacli: error:[/] {escape(error.message)}")
    if error.details:
        err.print(escape(error.details.rstrip()), style="dim")
    if error.hint:
        err.print(f"[yellow]hint:[/] {escape(error.hint)}")


def print_message(message: str) -> None:
    """Print a progress or status message on stderr."""
    stderr_console().print(message)


def plain_table(*columns: tuple[str, str]) -> Table:
    """A borderless table with bold headers; columns are ``(name, justify)``."""
    table = Table(box=None, pad_edge=False, header_style="bold")
    for name, justify in columns:
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    return table


def natural_width(renderable: RenderableType) -> int:
    """The columns a table takes when nothing is wrapped or cropped."""
    console = Console(width=10_000)
    return Measurement.get(console, console.options, renderable).maximum


def shows_whole(renderable: RenderableType, width: int, texts: Iterable[str]) -> bool:
    """Whether each of ``texts`` (cells that never wrap: a ``file:line``) is shown
    whole, on one line, when ``renderable`` is printed ``width`` columns wide."""
    import io

    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    console.print(renderable)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    return all(text in printed for text in texts)
