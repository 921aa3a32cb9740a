"""Where two HLO modules lowered from the same IR ops first differ.

When two graphs have the same IR ops and shapes, torch_xla lowers them to HLO
in the same order, so instruction N of one matches instruction N of the
other: the first pair that differs in a constant's literal or in an
attribute (a slice's bounds, a roll's shift) is the baked-in value.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlacli.hlo.model import HloModule, Instruction

# Attributes that change with names or ids, not with what is computed.
_IGNORED_ATTRIBUTES = frozenset({"metadata", "sharding", "frontend_attributes", "origin"})


@dataclass(frozen=True)
class HloDifference:
    """The first differing instruction pair; ``kind`` is "constant",
    "attribute", "shape", "instructions" (different counts or opcodes) or "none"."""

    kind: str
    old: Instruction | None = None
    new: Instruction | None = None
    detail: str = ""


def compare_hlo(old: HloModule, new: HloModule) -> HloDifference:
    """The first difference, computation by computation, instruction by instruction."""
    if len(old.computations) != len(new.computations):
        return HloDifference(
            "instructions",
            detail=f"{len(old.computations)} -> {len(new.computations)} computations",
        )
    for old_comp, new_comp in zip(old.computations, new.computations, strict=True):
        if len(old_comp.instructions) != len(new_comp.instructions):
            return HloDifference(
                "instructions",
                detail=f"{old_comp.name}: {len(old_comp.instructions)} -> "
                f"{len(new_comp.instructions)} instructions",
            )
        for before, after in zip(old_comp.instructions, new_comp.instructions, strict=True):
            difference = _compare_instruction(before, after)
            if difference is not None:
                return difference
    header = _header_difference(old, new)
    return HloDifference("attribute", detail=header) if header else HloDifference("none")


def _compare_instruction(before: Instruction, after: Instruction) -> HloDifference | None:
    if before.opcode != after.opcode:
        return HloDifference("instructions", before, after, f"{before.opcode} -> {after.opcode}")
    if str(before.shape) != str(after.shape):
        return HloDifference("shape", before, after, f"{before.shape} -> {after.shape}")
    if before.literal != after.literal:
        return HloDifference(
            "constant",
            before,
            after,
            f"constant {before.shape} {before.literal} -> {after.literal}",
        )
    keys = (set(before.attributes) | set(after.attributes)) - _IGNORED_ATTRIBUTES
    for key in sorted(keys):
        old_value, new_value = before.attributes.get(key), after.attributes.get(key)
        if old_value != new_value:
            return HloDifference(
                "attribute",
                before,
                after,
                f"{before.opcode} {key}={old_value} -> {key}={new_value}",
            )
    return None


def _header_difference(old: HloModule, new: HloModule) -> str:
    keys = set(old.attributes) | set(new.attributes)
    for key in sorted(keys):
        if old.attributes.get(key) != new.attributes.get(key):
            return f"module {key}: {old.attributes.get(key)} -> {new.attributes.get(key)}"
    return ""
