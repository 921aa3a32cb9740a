"""The compile-cost lines of ``xlacli diff-hlo RUN_A RUN_B``: which source lines grew."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from xlacli.analysis.check.line_growth import LineChange
from xlacli.paths import display_location

TOP = 10


def line_changes_text(changes: Sequence[LineChange]) -> Text:
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


def line_changes_data(changes: Sequence[LineChange]) -> list[dict[str, Any]]:
    """The diff's JSON ``lines``: one object per changed line."""
    return [{"location": c.location, "before": c.before, "after": c.after} for c in changes]
