"""The view of ``xlacli diff-hlo``: the structural diff, and for two run folders their
memory and compile cost by line; as text, JSON or the diff page."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xlacli.hlo.changes import DiffReport
from xlacli.render.hlo_diff import NARROW_BELOW, hlo_diff_text, report_to_dict
from xlacli.render.html.diff_page import diff_page_html
from xlacli.render.line_growth import line_changes_data, line_changes_text
from xlacli.render.memory_compare import memory_changes_data, memory_comparison_text
from xlacli.render.view import Block

if TYPE_CHECKING:
    from xlacli.analysis.check.line_growth import LineChange
    from xlacli.analysis.memory.compare import GraphMemoryChange


@dataclass(frozen=True)
class HloDiffView:
    """A diff: ``memory`` and ``lines`` (compile cost by line) only for two run
    folders (None: files or dumps); ``read``: a module file's text, for the page."""

    report: DiffReport
    details: bool = False
    memory: Sequence[GraphMemoryChange] | None = None
    lines: Sequence[LineChange] | None = None
    read: Callable[[str], str | None] = lambda file: None

    def text(self, width: int) -> list[Block]:
        narrow = width < NARROW_BELOW
        blocks: list[Block] = [hlo_diff_text(self.report, self.details, narrow=narrow, width=width)]
        if self.memory:
            blocks.append(memory_comparison_text(self.memory))
        if self.lines is not None:
            blocks.append(line_changes_text(self.lines))
        return blocks

    def json(self) -> str:
        data = report_to_dict(self.report)
        if self.memory:
            data["memory"] = memory_changes_data(self.memory)
        if self.lines is not None:
            data["lines"] = line_changes_data(self.lines)
        return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def html(self) -> str:
        return diff_page_html(self.report, self.read)
