"""One partitioned graph's SPMD record, from its HLO before and after optimization.

The module before optimization carries each parameter's ``sharding={...}``
(torch_xla annotates every input of an SPMD graph) and the shardings the user
asked for on outputs (``custom-call`` "Sharding"); the module after
optimization is the partitioned per-device program: its parameters and ROOT
give each shard's type, its instructions the collectives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xlacli.analysis.spmd.collectives import Locate, find_collectives
from xlacli.analysis.spmd.sharding import axis_notation
from xlacli.analysis.spmd.sharding_change import ShardingContext
from xlacli.hlo.model import HloModule, Instruction, Shape, TupleShape
from xlacli.report.sharding import GraphSpmd, MeshRecord, TensorSharding
from xlacli.run_folder.events import ShardingEvent, StartEvent

# (HLO sharding, global type) -> the user's mark_sharding line.
ShardingSites = Mapping[tuple[str, str], str]


def mesh_from_events(
    start: StartEvent | None, shardings: Sequence[ShardingEvent]
) -> MeshRecord | None:
    """The run's mesh: the global one if the model set it, else the first one it
    sharded over, else the first one it built."""
    candidates = [event.global_mesh for event in reversed(shardings)]
    candidates.append(start.global_mesh if start else None)
    candidates += [s.get("mesh") for event in shardings for s in event.shardings]
    # A mesh the script built and used only through MpDeviceLoader's input_sharding.
    candidates += [mesh for event in shardings for mesh in event.meshes]
    for mesh in candidates:
        if mesh:
            return MeshRecord(
                tuple(mesh["shape"]), tuple(mesh["axis_names"]), tuple(mesh["device_ids"])
            )
    return None


def sharding_sites(shardings: Sequence[ShardingEvent]) -> dict[tuple[str, str], str]:
    """Where each (sharding, type) was first asked for, from the child's sharding events."""
    sites: dict[tuple[str, str], str] = {}
    for event in shardings:
        for record in event.shardings:
            sites.setdefault((record["hlo_sharding"], record["type"]), record["site"])
    return sites


def sharding_context(
    start: StartEvent | None, shardings: Sequence[ShardingEvent]
) -> ShardingContext:
    """The recompile explainer's view of the child's sharding events."""
    return ShardingContext(sites=sharding_sites(shardings), mesh=mesh_from_events(start, shardings))


def graph_spmd(
    before: HloModule | None,
    after: HloModule | None,
    *,
    devices: int,
    mesh: MeshRecord | None,
    sites: ShardingSites,
    locate: Locate | None = None,
) -> GraphSpmd | None:
    """The graph's mesh, input and output shardings and collectives; None without HLO."""
    if before is None:
        return None

    def describe(hlo: str | None) -> str:
        return axis_notation(hlo, mesh) if hlo else "propagated"

    after_params = _parameters(after) if after is not None else {}
    inputs = tuple(
        _tensor(number, instruction.shape, after_params.get(number), instruction, describe, sites)
        for number, instruction in sorted(_parameters(before).items())
    )
    return GraphSpmd(
        devices=devices,
        mesh=mesh,
        inputs=inputs,
        outputs=_outputs(before, after, describe, sites),
        collectives=tuple(find_collectives(after, locate)) if after is not None else (),
    )


def _parameters(module: HloModule) -> dict[int, Instruction]:
    return {
        instruction.parameter_number: instruction
        for instruction in module.entry.instructions
        if instruction.opcode == "parameter" and instruction.parameter_number is not None
    }


def _outputs(
    before: HloModule,
    after: HloModule | None,
    describe: Callable[[str | None], str],
    sites: ShardingSites,
) -> tuple[TensorSharding, ...]:
    root = before.entry.root
    by_name = {instruction.name: instruction for instruction in before.entry.instructions}
    producers = [by_name.get(name) for name in root.operands] if root.opcode == "tuple" else [root]
    shard_shapes: list[Shape | None] = [None] * len(producers)
    if after is not None:
        after_root = after.entry.root.shape
        elements = after_root.elements if isinstance(after_root, TupleShape) else (after_root,)
        shard_shapes = [*elements[: len(producers)], *shard_shapes[len(elements) :]]
    outputs = []
    for index, producer in enumerate(producers):
        if producer is None:
            continue
        outputs.append(
            _tensor(index, producer.shape, shard_shapes[index], producer, describe, sites)
        )
    return tuple(outputs)


def _tensor(
    index: int,
    shape: Shape,
    shard: Instruction | Shape | None,
    annotated: Instruction,
    describe: Callable[[str | None], str],
    sites: ShardingSites,
) -> TensorSharding:
    global_type = _bare(shape)
    shard_shape = shard.shape if isinstance(shard, Instruction) else shard
    per_device = _bare(shard_shape) if shard_shape is not None else None
    hlo = annotated.attributes.get("sharding")
    axes = describe(hlo)
    if hlo is None and per_device is not None:
        # Not annotated: XLA chose it; same shape on every device means replicated.
        axes = "replicated (propagated)" if per_device == global_type else "split (propagated)"
    return TensorSharding(
        index=index,
        type=global_type,
        per_device_type=per_device,
        hlo=hlo,
        axes=axes,
        location=sites.get((hlo, global_type)) if hlo else None,
    )


def _bare(shape: Shape) -> str:
    return str(shape.without_layout())


def attach_spmd(
    graphs: Sequence[Any],
    *,
    start: StartEvent | None,
    context: ShardingContext,
    load_module: Callable[[str | None], HloModule | None],
    locate_for: Callable[[str], Locate],
) -> list[Any]:
    """The graphs (``GraphRecord``) with their ``spmd`` record when the run used SPMD.

    ``context``: the mesh and ``mark_sharding`` sites (``sharding_context``).
    """
    import dataclasses

    if start is None or not start.spmd:
        return list(graphs)
    devices = int(start.global_devices or 0)
    return [
        dataclasses.replace(
            graph,
            spmd=graph_spmd(
                load_module(graph.files.get("hlo_before")),
                load_module(graph.files.get("hlo_after")),
                devices=devices,
                mesh=context.mesh,
                sites=context.sites,
                locate=locate_for(graph.hash),
            ),
        )
        for graph in graphs
    ]
