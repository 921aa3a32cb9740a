"""The SPMD view: per graph, its mesh, input and output shardings, collectives
and per-device memory (terminal text; the JSON is the report itself)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from xlacli.analysis.spmd.collectives import shape_bytes
from xlacli.hlo.lexer import Malformed
from xlacli.hlo.shapes import read_shape
from xlacli.paths import display_location
from xlacli.report.run_report import GraphRecord
from xlacli.report.sharding import GraphSpmd, TensorSharding
from xlacli.units import counted, format_bytes, short_hash

MAX_OPS_LISTED = 8
# Split inputs (or outputs) of a graph listed one per row; past it, grouped.
MAX_TENSORS_LISTED = 8


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
    """The split tensors one per row, or, past ``MAX_TENSORS_LISTED`` (an FSDP
    model's every weight and optimizer state), one row per way they are split at
    one line; the replicated ones in one line. report.json and the HTML page
    list each."""
    split = [tensor for tensor in tensors if not tensor.replicated]
    replicated = [tensor for tensor in tensors if tensor.replicated]
    table = (
        _tensor_rows(what, split, narrow)
        if len(split) <= MAX_TENSORS_LISTED
        else _tensor_groups(what, split, narrow)
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


def _tensor_rows(what: str, tensors: list[TensorSharding], narrow: bool) -> Table:
    table = _table(narrow)
    for tensor in tensors:
        table.add_row(
            f"  {what[:-3] if narrow else what} {tensor.index}",  # in, out when narrow
            tensor.type,
            f"-> {tensor.per_device_type}" if tensor.per_device_type else "",
            Text(tensor.axes, style="cyan"),
            *([] if narrow else [Text(tensor.hlo or "", style="dim")]),
            _where(tensor.location, narrow),
        )
    return table


def _tensor_groups(what: str, tensors: list[TensorSharding], narrow: bool) -> Table:
    """``82 inputs  (fsdp, None)  14.2 MiB -> 3.55 MiB each device  train.py:46``:
    the tensors split alike at one line, the most first; their global bytes and
    what each device holds."""
    groups: dict[tuple[str, str | None], list[TensorSharding]] = {}
    for tensor in tensors:
        groups.setdefault((tensor.axes, tensor.location), []).append(tensor)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0][0]))
    table = _table(narrow)
    for (axes, location), same in ranked[:MAX_TENSORS_LISTED]:
        whole, shard = (
            _bytes_total(t.type for t in same),
            _bytes_total(t.per_device_type or t.type for t in same),
        )
        sizes = f"{format_bytes(whole)} -> {format_bytes(shard)} on each device" if whole else ""
        table.add_row(
            f"  {counted(len(same), what)}",
            Text(axes, style="cyan"),
            sizes,
            _where(location, narrow),
        )
    more = len(ranked) - MAX_TENSORS_LISTED
    if more > 0:
        rest = sum(len(same) for _, same in ranked[MAX_TENSORS_LISTED:])
        table.add_row(f"  ... {counted(rest, what)} split {more} other ways", "", "", "")
    return table


def _bytes_total(types: Iterable[str]) -> int:
    """The bytes of these HLO types together (0 when one does not read)."""
    total = 0
    for kind in types:
        try:
            total += shape_bytes(read_shape(kind, 0, {})[0])
        except Malformed:
            return 0
    return total


def _bytes_of(tensors: list[TensorSharding]) -> str:
    """``, 12.3 MiB on each device`` when the types read as HLO shapes."""
    total = _bytes_total(tensor.type for tensor in tensors)
    return f", {format_bytes(total)} on each device" if total else ""


def _collectives(spmd: GraphSpmd, narrow: bool) -> RenderableType:
    """The collectives per kind, then by kind and line (an FSDP step all-gathers
    each weight where it is used: one row per line, not per instruction)."""
    counts = spmd.collective_counts()
    if not counts:
        return Text("  no collectives")
    summary = ", ".join(
        f"{counted(count, kind)} ({format_bytes(size)})" for kind, (count, size) in counts.items()
    )
    groups: dict[tuple[str, str | None], list[int]] = {}
    for op in spmd.collectives:
        groups.setdefault((op.kind, op.location), []).append(op.bytes)
    ranked = sorted(groups.items(), key=lambda item: (-sum(item[1]), item[0][0]))
    table = _table(narrow)
    for (kind, location), sizes in ranked[:MAX_OPS_LISTED]:
        table.add_row(
            f"    {kind} ×{len(sizes)}" if len(sizes) > 1 else f"    {kind}",
            format_bytes(sum(sizes)),
            _where(location, narrow),
        )
    more = len(ranked) - MAX_OPS_LISTED
    tail = (
        [
            Text(
                f"    ... and {counted(more, 'other line')} (report.json lists every op)",
                style="dim",
            )
        ]
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
