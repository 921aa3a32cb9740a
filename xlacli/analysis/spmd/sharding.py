"""Shardings in HLO text, and what they mean on a mesh.

XLA prints a sharding as ``{replicated}``, ``{maximal device=0}``, ``{manual}``
or a tile assignment, ``{devices=[2,1,2]0,2,1,3 last_tile_dim_replicate}``
(``[2,1,2]``: the tensor's dims split 2 and 1 ways, the last entry a replica
group; then the device at each tile) or in iota form ``{devices=[2,2]<=[4]}``,
``<=[2,2]T(1,0)``. torch_xla builds a tile assignment from a mesh and a
partition spec (``mark_sharding(t, mesh, ("data", None))``): transpose the
mesh's device array so the axes each dim is split over come first, in dim
order, then the unused axes, and reshape. ``axis_notation`` runs that backwards
by trying every spec on the mesh, so each sharding reads as the spec that made it.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from xlacli.report.sharding import MeshRecord

_TILED = re.compile(r"devices=\[([\d,]+)\]([^\s}]*)")
_IOTA = re.compile(r"<=\[([\d,]+)\](?:T\(([\d,]+)\))?")


@dataclass(frozen=True)
class TileSharding:
    """A tiled sharding: how many ways each dim is split, and the devices in tile order."""

    tiles: tuple[int, ...]  # per tensor dim, plus the replica group when replicated_last
    devices: tuple[int, ...]
    replicated_last: bool


def parse_tile_sharding(text: str) -> TileSharding | None:
    """The tile assignment of a tiled sharding; None for replicated, maximal, manual."""
    match = _TILED.search(text)
    if match is None:
        return None
    tiles = tuple(int(size) for size in match.group(1).split(","))
    listed = match.group(2)
    iota = _IOTA.match(listed)
    if iota is not None:
        shape = tuple(int(size) for size in iota.group(1).split(","))
        order = tuple(int(axis) for axis in iota.group(2).split(",")) if iota.group(2) else None
        devices = _transposed(tuple(range(math.prod(shape))), shape, order)
    else:
        devices = tuple(int(device) for device in listed.split(",") if device)
    return TileSharding(tiles, devices, "last_tile_dim_replicate" in text)


def _transposed(
    values: tuple[int, ...], shape: tuple[int, ...], order: tuple[int, ...] | None
) -> tuple[int, ...]:
    """A row-major array's values after transposing its axes to ``order``."""
    if order is None:
        return values
    strides = [math.prod(shape[axis + 1 :]) for axis in range(len(shape))]
    new_shape = [shape[axis] for axis in order]
    return tuple(
        values[sum(index[i] * strides[order[i]] for i in range(len(order)))]
        for index in itertools.product(*(range(size) for size in new_shape))
    )


def axis_notation(sharding: str, mesh: MeshRecord | None) -> str:
    """The partition spec behind a sharding: ``(data, None)``, ``(data×model, None)``,
    ``replicated``; the HLO text itself when no spec on ``mesh`` makes it."""
    text = sharding.strip()
    if "replicated" in text and "devices=" not in text:
        return "replicated"
    if "manual" in text and "devices=" not in text:
        return "manual"
    maximal = re.search(r"maximal device=(\d+)", text)
    if maximal:
        return f"device {maximal.group(1)}"
    tile = parse_tile_sharding(text)
    if tile is None or mesh is None:
        return text
    rank = len(tile.tiles) - (1 if tile.replicated_last else 0)
    for spec in _candidate_specs(len(mesh.shape), rank):
        if _tile_for_spec(mesh, spec, rank) == tile:
            return _spec_text(spec, mesh, rank)
    return text


def _candidate_specs(axes: int, rank: int) -> list[tuple[int, ...]]:
    """Each mesh axis -> the tensor dim it splits (-1: not used), fewest splits first."""
    specs = list(itertools.product(range(-1, rank), repeat=axes))
    return sorted(specs, key=lambda spec: sum(dim >= 0 for dim in spec))


def _tile_for_spec(mesh: MeshRecord, spec: tuple[int, ...], rank: int) -> TileSharding:
    """The tile assignment torch_xla builds for ``spec`` (as ShardingSpec does)."""
    used = [axis for dim in range(rank) for axis in range(len(spec)) if spec[axis] == dim]
    unused = [axis for axis in range(len(spec)) if spec[axis] < 0]
    devices = _transposed(mesh.device_ids, mesh.shape, tuple(used + unused))
    tiles = [
        math.prod(mesh.shape[a] for a in range(len(spec)) if spec[a] == d) for d in range(rank)
    ]
    replicated = math.prod(mesh.shape[axis] for axis in unused)
    if unused and replicated > 1:
        return TileSharding((*tiles, replicated), devices, True)
    return TileSharding(tuple(tiles), devices, False)


def _spec_text(spec: tuple[int, ...], mesh: MeshRecord, rank: int) -> str:
    if all(dim < 0 for dim in spec):
        return "replicated"
    parts = [
        "×".join(mesh.axis_names[axis] for axis in range(len(spec)) if spec[axis] == dim) or "None"
        for dim in range(rank)
    ]
    return f"({', '.join(parts)})"
