"""Where a command's report goes: stdout, or the ``--output`` file."""

from __future__ import annotations

import sys
from pathlib import Path

from xlacli.paths import write_text_file


def write_output(text: str, output: Path | None) -> None:
    """Print ``text`` on stdout, or write it to ``output`` and print the file's path.

    Raises:
        UsageError: the file cannot be written.
    """
    if output is None:
        sys.stdout.write(text)
        return
    write_text_file(output, text)
    print(output)
