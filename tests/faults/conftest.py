"""Helpers of the faults suite: xlacli started as a process, and the processes
a run leaves behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import ASSETS, PYTHON_AS_AT_A_TERMINAL

FAULT_MODELS = ASSETS / "models" / "faults"


def start_cli(*args: str | Path, cwd: Path | None = None, **env: str) -> subprocess.Popen[str]:
    """Start ``python -m xlacli ARGS`` without waiting for it, as from a terminal."""
    return subprocess.Popen(
        [*PYTHON_AS_AT_A_TERMINAL, "-m", "xlacli", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200", **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def processes_mentioning(text: str) -> list[int]:
    """The live processes whose command line holds ``text`` (a run folder's path)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found
