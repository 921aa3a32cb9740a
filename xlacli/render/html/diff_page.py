"""The HLO diff page: the summary, patterns folded, each change with both sides.

It consumes the same ``DiffReport`` as the terminal view (``render/hlo_diff.py``);
the text of each side's instruction comes from the module files it names (``read``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xlacli.hlo.changes import (
    CHANGE_KINDS,
    Change,
    DiffReport,
    InstructionRef,
    ModuleDiff,
)
from xlacli.paths import display_path
from xlacli.render.hlo_diff import source_text
from xlacli.render.html.page import render_page
from xlacli.render.html.text_blocks import MAX_LINES

MAX_CHANGES = 300  # per module pair; the patterns above them fold the rest
MAX_INSTRUCTION_CHARS = 600
TOP_OPCODES = 12


def diff_page_html(report: DiffReport, read: Callable[[str], str | None]) -> str:
    """The whole page of a diff (``read``: a module file's text, None if unreadable)."""
    files = _Files(read)
    return render_page(
        "diff.html.j2",
        {
            "left": display_path(report.left),
            "right": display_path(report.right),
            "identical": report.identical,
            "inputs": report.inputs,
            "stage": report.stage,
            "summary": report.summary(),
            "modules": [_module_item(module, files) for module in report.modules],
            "left_only": report.left_only,
            "right_only": report.right_only,
        },
    )


class _Files:
    """The lines of each module file, read once per page."""

    def __init__(self, read: Callable[[str], str | None]) -> None:
        self._read = read
        self._lines: dict[str, list[str]] = {}

    def lines(self, file: str) -> list[str]:
        if file not in self._lines:
            self._lines[file] = (self._read(file) or "").splitlines()
        return self._lines[file]


def _module_item(module: ModuleDiff, files: _Files) -> dict[str, Any]:
    shown = module.changes[:MAX_CHANGES]
    right_lines = files.lines(module.right.file)
    changed_lines = {c.right.line for c in module.changes if c.right is not None}
    return {
        "label": module.label,
        "identical": module.identical,
        "left": module.left,
        "right": module.right,
        "unchanged": module.unchanged,
        "counts": {kind: module.count(kind) for kind in CHANGE_KINDS},
        "header_changes": module.header_changes,
        "opcodes": _opcode_deltas(module),
        "patterns": [
            {"pattern": pattern, "source": source_text(pattern.source)}
            for pattern in module.patterns
        ],
        "changes": [_change_item(change, module, files) for change in shown],
        "more_changes": len(module.changes) - len(shown),
        "right_text": [
            {"number": number, "text": text, "changed": number in changed_lines}
            for number, text in enumerate(right_lines[:MAX_LINES], start=1)
        ],
        "right_total": len(right_lines),
    }


def _change_item(change: Change, module: ModuleDiff, files: _Files) -> dict[str, Any]:
    return {
        "kind": change.kind,
        "opcode": change.opcode_text,
        "details": change.details,
        "source": source_text(change.source),
        "left": _side(change.left, files.lines(module.left.file)),
        "right": _side(change.right, files.lines(module.right.file)),
    }


def _side(ref: InstructionRef | None, lines: list[str]) -> dict[str, Any] | None:
    if ref is None:
        return None
    text = lines[ref.line - 1].strip() if 0 < ref.line <= len(lines) else f"%{ref.name}"
    return {
        "name": ref.name,
        "computation": ref.computation,
        "line": ref.line,
        "text": text[:MAX_INSTRUCTION_CHARS],
    }


def _opcode_deltas(module: ModuleDiff) -> list[tuple[str, int, int]]:
    before, after = module.left.opcodes, module.right.opcodes
    rows = [
        (opcode, before.get(opcode, 0), after.get(opcode, 0))
        for opcode in before.keys() | after.keys()
        if before.get(opcode, 0) != after.get(opcode, 0)
    ]
    rows.sort(key=lambda row: (-abs(row[2] - row[1]), row[0]))
    return rows[:TOP_OPCODES]
