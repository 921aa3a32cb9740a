"""Dump files (IR, HLO) as page blocks: capped, linked to the file, IR lines linked.

A transformer's optimized HLO runs to megabytes; the page shows the head of
each file and links to the whole file in the run folder, so the page stays
small and fast whatever the model.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_LINES = 400
MAX_CHARS = 40_000
_IR_LOCATION = re.compile(r"location=[^@\n]*?@(.+?:\d+)(?=,|\s*$)")


@dataclass(frozen=True)
class TextLine:
    """One line, and the page anchor it links to (a recompile explanation)."""

    text: str
    anchor: str | None = None


@dataclass(frozen=True)
class TextBlock:
    """The head of a file, how much of it that is, and where the whole file is."""

    role: str
    title: str
    lines: tuple[TextLine, ...]
    total_lines: int
    href: str  # the file, relative to the page

    @property
    def truncated(self) -> bool:
        return len(self.lines) < self.total_lines

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


def text_block(
    text: str | None,
    relative: str,
    *,
    role: str,
    title: str,
    href_base: str,
    anchors: Mapping[str, str] | None = None,
) -> TextBlock | None:
    """The capped ``text`` of the run's file ``relative``; None if it could not be read.

    ``anchors`` maps ``file.py:line`` (base name, as torch_xla's IR writes
    it) to a page anchor: IR lines at that location link to it.
    """
    if text is None:
        return None
    rows = text.splitlines()
    kept: list[TextLine] = []
    chars = 0
    for row in rows[:MAX_LINES]:
        chars += len(row) + 1
        if chars > MAX_CHARS and kept:
            break
        kept.append(TextLine(row, _anchor_of(row, anchors) if anchors else None))
    return TextBlock(role, title, tuple(kept), len(rows), f"{href_base}{relative}")


def _anchor_of(row: str, anchors: Mapping[str, str]) -> str | None:
    match = _IR_LOCATION.search(row)
    return anchors.get(match.group(1)) if match else None
