"""Indexes of one IR graph, each built in one pass and kept for the graph's
lookups: a lookup that scanned the graph each time made lookups x nodes on a
large graph (issue 40)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from xlacli.parse.ir_dump import IrGraph, IrNode, operand_id

T = TypeVar("T")


def per_graph(cache: dict[int, tuple[IrGraph, T]], ir: IrGraph, build: Callable[[IrGraph], T]) -> T:
    """``build(ir)``, once per graph: kept by the graph's id, with the graph beside
    it so that the id cannot be reused (one pass per graph, not one per lookup)."""
    kept = cache.get(id(ir))
    if kept is None or kept[0] is not ir:
        kept = cache[id(ir)] = (ir, build(ir))
    return kept[1]


def node_ordinals(ir: IrGraph) -> dict[IrNode, int]:
    """Each node (its first copy), and how many nodes with its op and line come before it."""
    seen: Counter[tuple[str, str, int] | None] = Counter()
    ordinals: dict[IrNode, int] = {}
    for node in ir.nodes:
        key = _key(node)
        ordinals.setdefault(node, seen[key])
        seen[key] += 1
    return ordinals


def consumers(ir: IrGraph) -> dict[int, list[IrNode]]:
    """Each node's id -> the nodes that consume it."""
    users: dict[int, list[IrNode]] = {}
    for node in ir.nodes:
        for operand in node.operands:
            users.setdefault(operand_id(operand), []).append(node)
    return users


def first_at_line(ir: IrGraph) -> dict[tuple[str, int], IrNode]:
    """(file base name, line) -> the first node made there."""
    first: dict[tuple[str, int], IrNode] = {}
    for node in ir.nodes:
        if node.location:
            first.setdefault((node.location.file, node.location.line), node)
    return first


def _key(node: IrNode) -> tuple[str, str, int] | None:
    location = node.location
    return (node.op, location.file, location.line) if location is not None else None
