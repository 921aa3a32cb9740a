"""A diff-hlo report's pieces: the rich summary and its JSON form (the view: ``render/diff.py``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.analysis.spmd.changes import spmd_change_summary
from xlacli.hlo.changes import CHANGE_KINDS, Change, DiffReport, ModuleDiff, Pattern, SourceRef
from xlacli.paths import display_path, display_walked
from xlacli.render.console import shows_whole

TOP_PATTERNS = 20
TOP_OPCODES = 12
_OP_WIDTH = 24
NARROW_BELOW = 110  # columns: below, the pattern table drops its torch op column
_KIND_STYLE = {"changed": "yellow", "added": "green", "removed": "red"}
_TABLE_STYLE: dict[str, Any] = {
    "title_justify": "left",
    "caption_justify": "left",
    "box": None,
    "padding": (0, 1),
}


def report_to_dict(report: DiffReport) -> dict[str, Any]:
    """The JSON form: ``identical``, ``summary``, ``changes``, ``patterns``, ``modules``..."""
    return {
        "identical": report.identical,
        "left": report.left,
        "right": report.right,
        "inputs": report.inputs,
        "stage": report.stage,
        "summary": report.summary(),
        "changes": [
            {"module": module.label, "opcode": change.opcode, **asdict(change)}
            for module in report.modules
            for change in module.changes
        ],
        "patterns": [
            {"module": module.label, **asdict(pattern)}
            for module in report.modules
            for pattern in module.patterns
        ],
        "modules": [_module_dict(module) for module in report.modules],
        "left_only": list(report.left_only),
        "right_only": list(report.right_only),
    }


def _module_dict(module: ModuleDiff) -> dict[str, Any]:
    return {
        "label": module.label,
        "identical": module.identical,
        "left": asdict(module.left),
        "right": asdict(module.right),
        "summary": {
            "unchanged": module.unchanged,
            **{kind: module.count(kind) for kind in CHANGE_KINDS},
        },
        "header_changes": list(module.header_changes),
        "paired_by": module.paired_by,
    }


def hlo_diff_text(
    report: DiffReport, details: bool = False, *, narrow: bool = False, width: int | None = None
) -> RenderableType:
    """The summary: per module pair, counts, opcode histogram and patterns
    (``narrow``: without the torch op column, so the source line stays whole;
    ``width``: the library line each source went through, where it fits)."""
    verdict = ("identical", "bold green") if report.identical else ("different", "bold red")
    parts: list[RenderableType] = [
        Text.assemble(
            ("xlacli diff-hlo ", "bold"),
            f"{display_path(report.left)} → {display_path(report.right)}  ",
            verdict,
        )
    ]
    if len(report.modules) > 1 or report.left_only or report.right_only:
        parts.append(_pairing_text(report))
    for module in report.modules:
        if not module.identical:
            parts.extend(_module_parts(module, details, narrow, width))
    return Group(*parts)


def _pairing_text(report: DiffReport) -> Text:
    identical = sum(1 for module in report.modules if module.identical)
    text = Text(
        f"{len(report.modules)} module pairs ({report.inputs}"
        + (f", {report.stage}-optimization HLO" if report.stage else "")
        + f"): {identical} identical, {len(report.modules) - identical} different"
    )
    for label, side in ((report.left_only, "left"), (report.right_only, "right")):
        if label:
            text.append(f"\nonly on the {side}: " + ", ".join(label), style="yellow")
    return text


def _module_parts(
    module: ModuleDiff, details: bool, narrow: bool, width: int | None
) -> list[RenderableType]:
    counts = "  ".join(f"{kind} {module.count(kind):,}" for kind in ("changed", "added", "removed"))
    parts: list[RenderableType] = [
        Text(""),
        Text.assemble(
            (module.label, "bold cyan"),
            f"  {module.left.instructions:,} → {module.right.instructions:,} instructions",
            (f"  (paired by {module.paired_by})" if module.paired_by else "", "dim"),
        ),
        Text(f"  unchanged {module.unchanged:,}  {counts}"),
    ]
    if module.header_changes:
        parts.append(Text("  module header differs: " + ", ".join(module.header_changes)))
    spmd = spmd_change_summary(module.changes)
    if spmd:
        parts.append(Text("  SPMD: " + ", ".join(f"{kind} {n:,}" for kind, n in spmd.items())))
    histogram = _opcode_table(module)
    if histogram is not None:
        parts.append(histogram)
    if module.patterns:
        table = _pattern_table(module.patterns, details, narrow, inside=width is not None)
        sources = [source_text(pattern.source) for pattern in module.patterns[:TOP_PATTERNS]]
        if width is not None and not shows_whole(table, width, sources):  # the user's line alone
            table = _pattern_table(module.patterns, details, narrow, inside=False)
        parts.append(table)
    if details and module.changes:
        parts.append(_change_lines(module.changes))
    return parts


def _opcode_table(module: ModuleDiff) -> Table | None:
    before, after = module.left.opcodes, module.right.opcodes
    deltas = sorted(
        (
            (opcode, before.get(opcode, 0), after.get(opcode, 0))
            for opcode in before.keys() | after.keys()
        ),
        key=lambda row: (-abs(row[2] - row[1]), row[0]),
    )
    deltas = [row for row in deltas if row[1] != row[2]]
    if not deltas:
        return None
    table = Table(title="opcodes whose count changed", **_TABLE_STYLE)
    for column in ("opcode", "before", "after", "Δ"):
        table.add_column(column, justify="left" if column == "opcode" else "right")
    for opcode, old, new in deltas[:TOP_OPCODES]:
        table.add_row(opcode, f"{old:,}", f"{new:,}", f"{new - old:+,}")
    if len(deltas) > TOP_OPCODES:
        table.caption = f"and {len(deltas) - TOP_OPCODES} more opcodes"
    return table


def _pattern_table(
    patterns: tuple[Pattern, ...], details: bool, narrow: bool, *, inside: bool
) -> Table:
    shown = patterns if details else patterns[:TOP_PATTERNS]
    table = Table(title="changes, grouped (most repeated first)", **_TABLE_STYLE)
    # The source line is what the user acts on: it keeps its width, "what" wraps;
    # the library line it went through (``inside``) only where the row has room.
    sources = [source_text(pattern.source, inside=inside) for pattern in shown]
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("change", no_wrap=True)
    table.add_column("opcode", no_wrap=True)
    table.add_column("what", ratio=1, overflow="fold", min_width=16)
    if not narrow:  # the torch op is worth least: dropped first
        table.add_column("op", max_width=_OP_WIDTH, overflow="ellipsis")
    # Never folded inside its file:line: as wide as the longest, "what" wraps instead.
    table.add_column("source", no_wrap=True)
    for pattern, source in zip(shown, sources, strict=True):
        table.add_row(
            f"{pattern.count:,}",
            Text(pattern.kind, style=_KIND_STYLE[pattern.kind]),
            pattern.opcode,
            "; ".join(pattern.details),
            *([] if narrow else [_op_text(pattern.source)]),
            source,
        )
    if len(patterns) > len(shown):
        table.caption = f"and {len(patterns) - len(shown)} more (--details lists every change)"
    return table


def _change_lines(changes: tuple[Change, ...]) -> Text:
    """Every change on a line of its own: kind, opcode, where, what, source."""
    text = Text("every change", style="bold")
    for change in changes:
        side = change.right or change.left
        assert side is not None
        names = " → ".join(f"%{ref.name}" for ref in (change.left, change.right) if ref)
        what = "; ".join(change.details) or side.shape
        source = source_text(change.source)
        text.append("\n  ")
        text.append(f"{change.kind:<8}", style=_KIND_STYLE[change.kind])
        text.append(f" {change.opcode_text}  {names} in {side.computation}: {what}")
        if source:
            text.append(f"  {source}", style="dim")
    return text


def _op_text(source: SourceRef | None) -> str:
    """The framework op: torch_xla's op_type, else the op_name (JAX sets only that)."""
    if source is None:
        return ""
    return source.op_type or source.op_name


def source_text(source: SourceRef | None, *, inside: bool = True) -> str:
    """The user's ``file:line`` (``~`` when lent by a neighbour), short as paths
    are shown, with the library line it went through when ``inside``:
    ``model.py:12 (inside torch/nn/modules/linear.py:134)``."""
    if source is None or not source.location:
        return ""
    location = display_walked(source.location, source.library if inside else None) or ""
    return f"~{location}" if source.inherited else location
