"""The memory lines of ``xlacli diff-hlo RUN_A RUN_B``: one line per pair of graphs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from xlacli.analysis.memory.compare import GraphMemoryChange
from xlacli.render.memory import dot_shares
from xlacli.units import format_bytes, short_hash


def memory_comparison_text(changes: Sequence[GraphMemoryChange]) -> Text:
    """``d5bed824 -> 21307e6e  peak 13.4 MiB -> 19.0 MiB (+42%); ...``, one line per pair."""
    text = Text("\nMemory and precision, graph by graph:", style="bold")
    for change in changes:
        text.append(f"\n  {short_hash(change.left)} -> {short_hash(change.right)}  ")
        text.append(change_summary(change))
    return text


def change_summary(change: GraphMemoryChange) -> str:
    """Peak, temporaries at the peak, matmul precision and barriers, before -> after."""
    relative = change.peak_change
    parts = [
        f"peak {_bytes_pair(change.peak_bytes)}"
        + (f" ({relative:+.0%})" if relative is not None else ""),
        f"temporaries {_bytes_pair(change.peak_temp_bytes)}",
        f"matmuls {dot_shares(change.dot_flops[0])} -> {dot_shares(change.dot_flops[1])}",
        "opt-barriers " + " -> ".join("-" if n is None else str(n) for n in change.opt_barriers),
    ]
    return "; ".join(parts)


def _bytes_pair(pair: tuple[int | None, int | None]) -> str:
    return f"{format_bytes(pair[0])} -> {format_bytes(pair[1])}"


def memory_changes_data(changes: Sequence[GraphMemoryChange]) -> list[dict[str, Any]]:
    """The diff's JSON ``memory``: one object per pair of graphs."""
    return [
        {
            "left": change.left,
            "right": change.right,
            "peak_bytes": list(change.peak_bytes),
            "peak_temp_bytes": list(change.peak_temp_bytes),
            "dot_flops": list(change.dot_flops),
            "opt_barriers": list(change.opt_barriers),
        }
        for change in changes
    ]
