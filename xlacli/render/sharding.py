"""The SPMD view: per graph, its mesh, input and output shardings, collectives
and per-device memory (terminal text; the JSON is the report itself)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.paths import display_location
from xlacli.report.run import GraphRecord
from xlacli.report.sharding import GraphSpmd, TensorSharding
from xlacli.units import format_bytes, short_hash
from xlacli.words import counted

MAX_OPS_LISTED = 8


def spmd_view(graphs: Iterable[GraphRecord]) -> RenderableType | None:
    """One block per partitioned graph; None when no graph was partitioned."""
    blocks: list[RenderableType] = []
    for graph in graphs:
        if graph.spmd is not None:
            blocks += [Text(""), _graph_block(graph, graph.spmd)]
    if not blocks:
        return None
    return Group(Text("SPMD", style="bold"), *blocks)


def _graph_block(graph: GraphRecord, spmd: GraphSpmd) -> RenderableType:
    mesh = spmd.mesh
    mesh_text = (
        f"mesh {'×'.join(map(str, mesh.shape))} ({', '.join(mesh.axis_names)})"
        if mesh
        else "no mesh recorded"
    )
    memory = (
        f"per device: in {format_bytes(graph.input_bytes)}, "
        f"out {format_bytes(graph.output_bytes)}, temp {format_bytes(graph.temp_bytes)}"
    )
    header = Text.assemble(
        (short_hash(graph.hash), "bold"), f"  {spmd.devices} devices, {mesh_text}; {memory}"
    )
    return Group(
        header,
        _tensor_table("input", spmd.inputs),
        _tensor_table("output", spmd.outputs),
        _collectives(spmd),
    )


def _tensor_table(what: str, tensors: tuple[TensorSharding, ...]) -> Table:
    table = Table(box=None, pad_edge=False, show_header=False, padding=(0, 1))
    for tensor in tensors:
        if tensor.replicated and what == "output":
            continue  # most outputs are replicated scalars and copies; show the split ones
        table.add_row(
            f"  {what} {tensor.index}",
            tensor.type,
            f"-> {tensor.per_device_type}" if tensor.per_device_type else "",
            Text(tensor.axes, style="cyan"),
            Text(tensor.hlo or "", style="dim"),
            display_location(tensor.location) if tensor.location else "",
        )
    return table


def _collectives(spmd: GraphSpmd) -> RenderableType:
    counts = spmd.collective_counts()
    if not counts:
        return Text("  no collectives")
    summary = ", ".join(
        f"{counted(count, kind)} ({format_bytes(size)})" for kind, (count, size) in counts.items()
    )
    table = Table(box=None, pad_edge=False, show_header=False, padding=(0, 1))
    for op in spmd.collectives[:MAX_OPS_LISTED]:
        table.add_row(
            f"    {op.name}",
            format_bytes(op.bytes),
            Text(op.replica_groups, style="dim"),
            display_location(op.location) if op.location else "",
        )
    more = len(spmd.collectives) - MAX_OPS_LISTED
    tail = (
        [Text(f"    ... and {more} more (report.json lists them all)", style="dim")]
        if more > 0
        else []
    )
    return Group(Text(f"  collectives per step: {summary}"), table, *tail)
