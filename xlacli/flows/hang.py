"""A single process stopped by ``--hang-timeout``: where it waited, on stderr
(a launched run's rank 0 prints every rank's in the merged report)."""

from __future__ import annotations

from rich.markup import escape

from xlacli.analysis.ranks.hangs import explain_hang
from xlacli.parse.frames import current_code_roots
from xlacli.render.console import print_message
from xlacli.render.ranks import hang_sentence
from xlacli.report.run_report import RunReport
from xlacli.run_folder.hang import STACKS_FILE
from xlacli.run_folder.request import RunPaths


def print_hang(paths: RunPaths, report: RunReport) -> None:
    """Say where the process waited, with its stack, from its dump."""
    stacks = paths.root / STACKS_FILE
    text = stacks.read_text(encoding="utf-8", errors="replace") if stacks.exists() else None
    hang = explain_hang(0, report, text, current_code_roots())
    print_message(escape(hang_sentence(hang).replace("rank 0 ", "the process ", 1)))
    for frame in hang.stack:
        print_message(f"    {escape(frame)}")
