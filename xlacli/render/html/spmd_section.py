"""Context of the run page's SPMD section: per partitioned graph, its mesh, the
sharding of each input and output, the collectives and the per-device bytes."""

from __future__ import annotations

from typing import Any

from xlacli.paths import display_location
from xlacli.render.html.context import RunContext, graph_anchor
from xlacli.report.run_report import GraphRecord
from xlacli.report.sharding import CollectiveOp, GraphSpmd, TensorSharding

MAX_COLLECTIVES = 200  # a page, not report.json: beyond this, the JSON lists them


def context(run: RunContext) -> dict[str, Any] | None:
    """One entry per partitioned graph; None when no graph was partitioned."""
    graphs = [_graph_item(graph, graph.spmd) for graph in run.report.graphs if graph.spmd]
    return {"graphs": graphs} if graphs else None


def _graph_item(graph: GraphRecord, spmd: GraphSpmd) -> dict[str, Any]:
    mesh = spmd.mesh
    return {
        "hash": graph.hash,
        "anchor": graph_anchor(graph.hash),
        "devices": spmd.devices,
        "mesh": "×".join(map(str, mesh.shape)) if mesh else None,
        "axes": ", ".join(mesh.axis_names) if mesh else "",
        "device_ids": " ".join(map(str, mesh.device_ids)) if mesh else "",
        "memory": {
            "input": graph.input_bytes,
            "output": graph.output_bytes,
            "temp": graph.temp_bytes,
        },
        "inputs": [_tensor_row("input", t) for t in spmd.inputs],
        "outputs": [_tensor_row("output", t) for t in spmd.outputs],
        "split_outputs": sum(not t.replicated for t in spmd.outputs),
        "counts": [
            {"kind": kind, "count": count, "bytes": size}
            for kind, (count, size) in spmd.collective_counts().items()
        ],
        "collectives": [_collective_row(op) for op in spmd.collectives[:MAX_COLLECTIVES]],
        "more_collectives": max(0, len(spmd.collectives) - MAX_COLLECTIVES),
    }


def _tensor_row(role: str, tensor: TensorSharding) -> dict[str, Any]:
    return {
        "role": role,
        "index": tensor.index,
        "type": tensor.type,
        "per_device": tensor.per_device_type or "",
        "axes": tensor.axes,
        "hlo": tensor.hlo or "",
        "location": display_location(tensor.location) or "",
        "split": not tensor.replicated,
    }


def _collective_row(op: CollectiveOp) -> dict[str, Any]:
    return {
        "name": op.name,
        "kind": op.kind + (" (async)" if op.is_async else ""),
        "bytes": op.bytes,
        "replica_groups": op.replica_groups,
        "location": display_location(op.location) or "",
        "library_location": display_location(op.library_location) or "",
    }
