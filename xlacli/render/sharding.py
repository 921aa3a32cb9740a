"""The SPMD view: per graph, its mesh, input and output shardings, collectives
and per-device memory (terminal text; the JSON is the report itself)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from xlacli.analysis.collectives import shape_bytes
from xlacli.hlo.lexer import Malformed
from xlacli.hlo.shapes import read_shape
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


def _tensor_table(what: str, tensors: tuple[TensorSharding, ...]) -> RenderableType:
    """The split tensors one per row; the replicated ones (a data-parallel
    model's every weight) in one line. report.json lists them all."""
    table = Table(box=None, pad_edge=False, show_header=False, padding=(0, 1))
    replicated = [tensor for tensor in tensors if tensor.replicated]
    for tensor in tensors:
        if tensor.replicated:
            continue
        table.add_row(
            f"  {what} {tensor.index}",
            tensor.type,
            f"-> {tensor.per_device_type}" if tensor.per_device_type else "",
            Text(tensor.axes, style="cyan"),
            Text(tensor.hlo or "", style="dim"),
            display_location(tensor.location) if tensor.location else "",
        )
    if not replicated:
        return table
    line = Text(
        f"  {counted(len(replicated), what)} replicated on every device"
        + _bytes_of(replicated)
        + (" (the rest: report.json and the HTML page list each)" if what == "input" else ""),
        style="dim",
    )
    return Group(table, line) if table.row_count else line


def _bytes_of(tensors: list[TensorSharding]) -> str:
    """``, 12.3 MiB on each device`` when the types read as HLO shapes."""
    total = 0
    for tensor in tensors:
        try:
            total += shape_bytes(read_shape(tensor.type, 0, {})[0])
        except Malformed:
            return ""
    return f", {format_bytes(total)} on each device" if total else ""


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
