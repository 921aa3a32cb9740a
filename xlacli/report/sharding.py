"""The SPMD part of a graph's report: mesh, shardings, collectives, per-device bytes.

Frozen dataclasses stored in ``GraphRecord.spmd`` (None for a graph that was not
partitioned), read back with defaults like the rest of ``report.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MeshRecord:
    """The device mesh a graph was sharded over."""

    shape: tuple[int, ...]
    axis_names: tuple[str, ...]
    device_ids: tuple[int, ...]


@dataclass(frozen=True)
class TensorSharding:
    """How one input or output of a graph is split over the devices."""

    index: int  # parameter number, or position in the output tuple
    type: str  # the global type, ``f32[16,32]``
    per_device_type: str | None  # the shard each device holds, from the partitioned module
    hlo: str | None  # ``{devices=[4,1]0,1,2,3}``; None: not annotated (XLA propagated it)
    axes: str  # ``(data, None)``, ``replicated``, or ``propagated``
    location: str | None = None  # the user's line that asked for it (mark_sharding)

    @property
    def replicated(self) -> bool:
        """Every device holds the whole tensor (``replicated``, or replicated on some axes)."""
        return self.axes.startswith("replicated")


@dataclass(frozen=True)
class CollectiveOp:
    """One collective of the partitioned module."""

    kind: str  # all-reduce, all-gather, reduce-scatter, all-to-all, collective-permute
    name: str  # the instruction, ``all-reduce.2``
    bytes: int  # the size of its result on each device
    replica_groups: str  # as printed (or source_target_pairs for a permute)
    is_async: bool  # a -start/-done pair
    location: str | None  # the user's line behind it (from the HLO metadata)
    library_location: str | None = None  # the library line it came through


@dataclass(frozen=True)
class GraphSpmd:
    """A partitioned graph: where its tensors live and what the devices exchange."""

    devices: int
    mesh: MeshRecord | None
    inputs: tuple[TensorSharding, ...]
    outputs: tuple[TensorSharding, ...]
    collectives: tuple[CollectiveOp, ...]

    def collective_counts(self) -> dict[str, tuple[int, int]]:
        """Per kind: how many and how many bytes (per device)."""
        counts: dict[str, tuple[int, int]] = {}
        for op in self.collectives:
            count, size = counts.get(op.kind, (0, 0))
            counts[op.kind] = (count + 1, size + op.bytes)
        return dict(sorted(counts.items()))


def graph_spmd_from_dict(data: dict[str, Any] | None) -> GraphSpmd | None:
    """Read ``GraphRecord.spmd`` back from ``report.json``."""
    if not data:
        return None
    mesh = data.get("mesh")
    return GraphSpmd(
        devices=data.get("devices", 0),
        mesh=MeshRecord(
            tuple(mesh.get("shape", ())),
            tuple(mesh.get("axis_names", ())),
            tuple(mesh.get("device_ids", ())),
        )
        if mesh
        else None,
        inputs=tuple(TensorSharding(**t) for t in data.get("inputs", [])),
        outputs=tuple(TensorSharding(**t) for t in data.get("outputs", [])),
        collectives=tuple(CollectiveOp(**c) for c in data.get("collectives", [])),
    )
