"""SPMD recompiles: the input whose sharding differs between two graphs.

A tensor's sharding is part of the graph torch_xla hashes and compiles, and
its IR text does not show it: the HLO before optimization does, as the
``sharding={...}`` of each parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from xlacli.analysis.spmd.sharding import axis_notation
from xlacli.hlo.model import HloModule
from xlacli.report.sharding import MeshRecord


@dataclass(frozen=True)
class ShardingContext:
    """What the child recorded: (HLO sharding, type) -> the user's mark_sharding
    line, and the mesh the shardings are read on."""

    sites: Mapping[tuple[str, str], str] = field(default_factory=dict)
    mesh: MeshRecord | None = None

    def describe(self, sharding: str | None) -> str:
        """``(data, None) {devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}``."""
        if sharding is None:
            return "none"
        spec = axis_notation(sharding, self.mesh)
        return sharding if spec == sharding else f"{spec} {sharding}"


def input_sharding_change(
    old: HloModule, new: HloModule, context: ShardingContext
) -> tuple[str | None, str] | None:
    """(the user's mark_sharding line, ``parameter 4 f32[8,16] sharding A -> B``) for
    the parameters whose sharding changed; None when none did."""
    sites = context.sites
    old_params, new_params = _shardings(old), _shardings(new)
    if not any(sharding for sharding, _ in new_params.values()):
        return None  # not an SPMD graph
    if [t for _, t in old_params.values()] != [t for _, t in new_params.values()]:
        return None  # other inputs: not the same graph sharded differently
    changes = []
    location = None
    for number, (sharding, type_) in sorted(new_params.items()):
        before = old_params.get(number)
        if before is None or before[1] != type_ or before[0] == sharding:
            continue
        changes.append(
            f"parameter {number} {type_} sharding "
            f"{context.describe(before[0])} -> {context.describe(sharding)}"
        )
        if location is None and sharding is not None:
            location = sites.get((sharding, type_)) or sites.get((before[0] or "", type_))
    if not changes:
        return _annotation_change(old, new, context)
    return location, "; ".join(changes)


def _annotation_change(
    old: HloModule, new: HloModule, context: ShardingContext
) -> tuple[str | None, str] | None:
    """A ``mark_sharding`` on an intermediate (an activation) is a ``Sharding``
    custom-call in the HLO: the same annotations, in order, with another
    ``sharding=`` attribute."""
    before, after = _annotations(old), _annotations(new)
    if len(before) != len(after) or [t for _, t in before] != [t for _, t in after]:
        return None
    changes, location = [], None
    for (old_sharding, type_), (sharding, _) in zip(before, after, strict=True):
        if old_sharding == sharding:
            continue
        changes.append(
            f"the sharding annotation on {type_} "
            f"{context.describe(old_sharding)} -> {context.describe(sharding)}"
        )
        location = location or context.sites.get((sharding or "", type_))
    if not changes:
        return None
    return location, "; ".join(changes)


def _annotations(module: HloModule) -> list[tuple[str | None, str]]:
    """Each ``Sharding`` custom-call's sharding and type, in order."""
    return [
        (instruction.attributes.get("sharding"), str(instruction.shape.without_layout()))
        for instruction in module.entry.instructions
        if instruction.opcode == "custom-call"
        and instruction.attributes.get("custom_call_target") == '"Sharding"'
    ]


def _shardings(module: HloModule) -> dict[int, tuple[str | None, str]]:
    """Each parameter's sharding and type, in parameter order."""
    found: dict[int, tuple[str | None, str]] = {}
    for instruction in module.entry.instructions:
        number = instruction.parameter_number
        if instruction.opcode == "parameter" and number is not None:
            found[number] = (
                instruction.attributes.get("sharding"),
                str(instruction.shape.without_layout()),
            )
    return dict(sorted(found.items()))
