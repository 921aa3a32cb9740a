"""Where a command's report goes: stdout, or the ``--output`` file."""

from __future__ import annotations

import sys
from pathlib import Path

from xlacli.errors import UsageError


def write_output(text: str, output: Path | None) -> None:
    """Print ``text`` on stdout, or write it to ``output`` and print the file's path.

    Raises:
        UsageError: the file cannot be written.
    """
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise UsageError(f"cannot write {output}: {error.strerror or error}") from None
    print(output)
