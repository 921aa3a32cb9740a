"""The SPMD view: per graph, its mesh, input and output shardings, collectives
and per-device memory (terminal text; the JSON is the report itself)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.padding import Padding
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


def spmd_view(graphs: Iterable[GraphRecord], *, narrow: bool = False) -> RenderableType | None:
    """One block per partitioned graph; None when no graph was partitioned.

    ``narrow``: without XLA's form of each sharding, and lines by file name, so that
    the mark_sharding line is never cropped."""
    blocks: list[RenderableType] = []
    for graph in graphs:
        if graph.spmd is not None:
            blocks += [Text(""), _graph_block(graph, graph.spmd, narrow)]
    if not blocks:
        return None
    return Group(Text("SPMD", style="bold"), *blocks)


def _graph_block(graph: GraphRecord, spmd: GraphSpmd, narrow: bool) -> RenderableType:
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
        _tensor_table("input", spmd.inputs, narrow),
        _tensor_table("output", spmd.outputs, narrow),
        _collectives(spmd, narrow),
    )


def _tensor_table(what: str, tensors: tuple[TensorSharding, ...], narrow: bool) -> RenderableType:
    """The split tensors one per row; the replicated ones (a data-parallel
    model's every weight) in one line. report.json lists them all."""
    table = _table(narrow)
    replicated = [tensor for tensor in tensors if tensor.replicated]
    for tensor in tensors:
        if tensor.replicated:
            continue
        table.add_row(
            f"  {what[:-3] if narrow else what} {tensor.index}",  # in, out when narrow
            tensor.type,
            f"-> {tensor.per_device_type}" if tensor.per_device_type else "",
            Text(tensor.axes, style="cyan"),
            *([] if narrow else [Text(tensor.hlo or "", style="dim")]),
            _where(tensor.location, narrow),
        )
    if not replicated:
        return table
    line = Padding(
        Text(
            f"{counted(len(replicated), what)} replicated on every device"
            + _bytes_of(replicated)
            + (" (the rest: report.json and the HTML page list each)" if what == "input" else ""),
            style="dim",
        ),
        (0, 0, 0, 2),
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


def _collectives(spmd: GraphSpmd, narrow: bool) -> RenderableType:
    counts = spmd.collective_counts()
    if not counts:
        return Text("  no collectives")
    summary = ", ".join(
        f"{counted(count, kind)} ({format_bytes(size)})" for kind, (count, size) in counts.items()
    )
    table = _table(narrow)
    for op in spmd.collectives[:MAX_OPS_LISTED]:
        table.add_row(
            f"    {op.name}",
            format_bytes(op.bytes),
            *([] if narrow else [Text(op.replica_groups, style="dim")]),
            _where(op.location, narrow),
        )
    more = len(spmd.collectives) - MAX_OPS_LISTED
    tail = (
        [Text(f"    ... and {more} more (report.json lists them all)", style="dim")]
        if more > 0
        else []
    )
    return Group(Text(f"  collectives per step: {summary}"), table, *tail)


def _where(location: str | None, narrow: bool) -> str:
    """The user's line; by file name when narrow (a path would be cropped)."""
    shown = display_location(location) or ""
    return shown.rpartition("/")[2] if narrow else shown


def _table(narrow: bool) -> Table:
    """A borderless table; one space between columns when narrow, two otherwise."""
    padding = (0, 1, 0, 0) if narrow else (0, 1)
    return Table(box=None, pad_edge=False, show_header=False, padding=padding)
