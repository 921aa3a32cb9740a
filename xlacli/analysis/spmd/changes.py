"""diff-hlo's SPMD reading: which changes are shardings and which collectives.

A sharding change is an instruction whose ``sharding={...}`` differs (a
``mark_sharding`` with another spec); a collective change is an all-reduce,
all-gather, reduce-scatter, all-to-all or collective-permute added, removed or
changed (what partitioning a differently sharded graph makes XLA exchange).
"""

from __future__ import annotations

from collections.abc import Iterable

from xlacli.analysis.spmd.collectives import collective_kind
from xlacli.hlo.changes import Change


def spmd_change_kind(change: Change) -> str | None:
    """``sharding``, ``collective`` or None for a change of another kind."""
    if any(detail.startswith("sharding ") for detail in change.details):
        return "sharding"
    opcodes = [side.opcode for side in (change.left, change.right) if side is not None]
    if any(collective_kind(opcode) for opcode in opcodes):
        return "collective"
    return None


def spmd_change_summary(changes: Iterable[Change]) -> dict[str, int]:
    """``{"sharding changed": 1, "collective added": 2}``: SPMD changes by kind, sorted."""
    summary: dict[str, int] = {}
    for change in changes:
        kind = spmd_change_kind(change)
        if kind is not None:
            key = f"{kind} {change.kind}"
            summary[key] = summary.get(key, 0) + 1
    return dict(sorted(summary.items()))
