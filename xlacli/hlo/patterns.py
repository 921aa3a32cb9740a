"""Grouping repeated changes into patterns: one line for the same change in N layers.

A model change in a block repeats in every layer (and again in the
backward pass): the same kind of change, on the same opcode, for the same
reasons and details, made by the same framework op on the same source line.
Those changes differ only in where they are, so they make one pattern.
"""

from __future__ import annotations

from xlacli.hlo.changes import CHANGE_KINDS, CHANGED, Change, Pattern

_EXAMPLES = 3


def group_patterns(changes: list[Change]) -> tuple[Pattern, ...]:
    """Group changes that differ only by position; most frequent first."""
    groups: dict[tuple[object, ...], list[Change]] = {}
    for change in changes:
        groups.setdefault(_pattern_key(change), []).append(change)
    patterns = [_pattern(members) for members in groups.values()]
    patterns.sort(
        key=lambda p: (
            -p.count,
            CHANGE_KINDS.index(p.kind),
            p.opcode,
            p.source.location if p.source else "",
        )
    )
    return tuple(patterns)


def _pattern_key(change: Change) -> tuple[object, ...]:
    # op_name is left out on purpose: frameworks number it per call
    # (aten__add.89/aten__add), which differs from layer to layer.
    source = change.source
    shape = (change.right or change.left).shape if change.kind != CHANGED else ""  # type: ignore[union-attr]
    return (
        change.kind,
        change.opcode_text,
        change.reasons,
        change.details,
        shape,
        source.op_type if source else "",
        source.location if source else "",
        source.library if source else "",  # one user line calls several library lines
    )


def _pattern(members: list[Change]) -> Pattern:
    first = members[0]
    details = first.details
    if first.kind != CHANGED:
        side = first.right or first.left
        details = (side.shape,) if side else ()
    examples = tuple(
        side.name for change in members[:_EXAMPLES] if (side := change.right or change.left)
    )
    return Pattern(
        kind=first.kind,
        opcode=first.opcode_text,
        reasons=first.reasons,
        details=details,
        source=first.source,
        count=len(members),
        examples=examples,
    )
