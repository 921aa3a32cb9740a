"""The consoles: data on stdout, progress and messages on stderr."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from xlacli.errors import XlacliError

# Piped or redirected output has no width: wide enough for the tables, so a
# file or a CI log holds whole rows.
PIPE_WIDTH = 160


def stdout_console() -> Console:
    """A console for data (tables, reports) on stdout."""
    console = Console(file=sys.stdout, highlight=False, soft_wrap=False)
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
