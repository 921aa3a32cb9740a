"""The compile-cost lines of ``xlacli diff-hlo RUN_A RUN_B``: which source lines grew."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.text import Text

from xlacli.analysis.check.line_growth import LineChange, line_changes, line_instructions
from xlacli.paths import display_location
from xlacli.report.run_report import REPORT_FILE, load_report

TOP = 10


def run_line_changes(left: Path, right: Path) -> list[LineChange] | None:
    """Lines whose HLO instructions changed, when both paths are run folders with
    compile cost by line; else None."""
    if not ((left / REPORT_FILE).is_file() and (right / REPORT_FILE).is_file()):
        return None
    before, after = load_report(left), load_report(right)
    if before.compile_cost is None or after.compile_cost is None:
        return None
    return line_changes(line_instructions(before), line_instructions(after))


def line_changes_text(changes: list[LineChange]) -> Text:
    """``model.py:35  504 -> 1512 (+1008)``, the lines that grew most first."""
    text = Text("\nCompile cost by source line (HLO instructions, all graphs):", style="bold")
    if not changes:
        text.append("\n  no line changed")
    for change in changes[:TOP]:
        text.append(f"\n  {display_location(change.location) or change.location}  ")
        text.append(f"{change.before} -> {change.after} ({change.growth:+d})")
    if len(changes) > TOP:
        text.append(f"\n  ... {len(changes) - TOP} more in --format json", style="dim")
    return text


def with_line_changes(diff_json: str, changes: list[LineChange]) -> str:
    """The diff's JSON with a ``lines`` list added (one object per changed line)."""
    data: dict[str, Any] = json.loads(diff_json)
    data["lines"] = [
        {"location": c.location, "before": c.before, "after": c.after} for c in changes
    ]
    return json.dumps(data, indent=2, sort_keys=True) + "\n"
