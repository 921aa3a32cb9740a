"""``diff-hlo RUN_A RUN_B``: what two run folders add to their HLO diff, read from their
reports (each loaded once): memory and precision graph by graph, compile cost by line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from xlacli.analysis.check.line_growth import LineChange, line_changes, line_instructions
from xlacli.analysis.memory.compare import GraphMemoryChange, compare_memory
from xlacli.report.run_report import REPORT_FILE, load_report


@dataclass(frozen=True)
class RunFolderDiff:
    """Two run folders' memory pairs and changed lines (None: not two run folders, or
    reports without compile cost by line)."""

    memory: list[GraphMemoryChange] | None = None
    lines: list[LineChange] | None = None


def run_folder_diff(left: Path, right: Path) -> RunFolderDiff:
    """What ``left`` and ``right`` add to their diff when both are run folders."""
    if not ((left / REPORT_FILE).is_file() and (right / REPORT_FILE).is_file()):
        return RunFolderDiff()
    before, after = load_report(left), load_report(right)
    lines = None
    if before.compile_cost is not None and after.compile_cost is not None:
        lines = line_changes(line_instructions(before), line_instructions(after))
    return RunFolderDiff(compare_memory(before, after), lines)
