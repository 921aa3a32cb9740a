"""Fingerprints: what an instruction is, and what its whole subgraph computes.

Names, ids and metadata are left out, so that renumbering, reordering and
moved source lines change nothing. The *local* fingerprint covers opcode,
shape (with layout), the attributes that carry meaning, the parameter number
and the constant's value. The *subgraph* fingerprint folds in the subgraph
fingerprints of the children (operands, then called computations' roots),
so two nodes with equal subgraph fingerprints compute the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from xlacli.hlo.attributes import CALLED_COMPUTATION_KEYS
from xlacli.hlo.graph import HloGraph, build_graph
from xlacli.hlo.model import Attributes, HloModule

# Attributes that name other instructions or computations, or say where an
# instruction came from: they differ between equal programs.
IGNORED_ATTRIBUTES = frozenset(
    {"control-predecessors", "statistics", "origin", *CALLED_COMPUTATION_KEYS}
)


@dataclass(slots=True, eq=False)
class Fingerprints:
    """Per-node fingerprints of one graph (plain ints: equal within one process)."""

    local: list[int]
    subgraph: list[int]


def comparable_attributes(attributes: Attributes) -> tuple[tuple[str, str], ...]:
    """The attributes that carry meaning, sorted by key."""
    return tuple(
        sorted((key, value) for key, value in attributes.items() if key not in IGNORED_ATTRIBUTES)
    )


def module_fingerprint(module: HloModule) -> int:
    """What the module's entry computation computes, whatever the names and order."""
    graph = build_graph(module)
    root = graph.node_of(module.entry.root)
    return fingerprint(graph).subgraph[root]


def fingerprint(graph: HloGraph) -> Fingerprints:
    """Compute the local and subgraph fingerprints of every node."""
    local = _local_fingerprints(graph)
    subgraph = list(local)
    children = graph.children
    for node in graph.order:
        kids = children[node]
        if kids:
            subgraph[node] = hash((local[node], *map(subgraph.__getitem__, kids)))
    return Fingerprints(local, subgraph)


def _local_fingerprints(graph: HloGraph) -> list[int]:
    # Shapes and attribute maps are shared objects within a parsed module, so
    # a key of their identities finds instructions alike at the cost of one
    # dict lookup; each distinct key is hashed by value once.
    by_identity: dict[tuple[object, ...], int] = {}
    local = []
    for instruction in graph.nodes:
        key = (
            instruction.opcode,
            id(instruction.shape),
            id(instruction.attributes),
            instruction.parameter_number,
            instruction.literal,
            len(instruction.operands),
        )
        value = by_identity.get(key)
        if value is None:
            value = by_identity[key] = hash(
                (
                    instruction.opcode,
                    instruction.shape,
                    comparable_attributes(instruction.attributes),
                    instruction.parameter_number,
                    instruction.literal,
                    len(instruction.operands),
                )
            )
        local.append(value)
    return local
