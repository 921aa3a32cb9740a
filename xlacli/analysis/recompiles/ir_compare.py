"""Where two lazy IR graphs of one sync site first differ.

Three levels, as a cache key is compared: the ops (a branch added or removed
some), then the shapes (the first node whose shape changed while its
operands' did not is where the change was born), then nothing: the IR is
the same and the difference hides in values torch_xla's IR text does not
print (constants, slice indices), which ``hlo_compare`` finds.

Before comparing, both graphs are normalised: a node that repeats an
earlier node exactly (same op, attributes, shape and operands) is folded
into it. torch_xla shares such nodes in one graph and rebuilds them in
another (the first step reuses a weight's transpose from the forward pass,
later steps build it afresh), and that is not a change of the program.
Nodes are matched by op, shape and location, the way ``diff-hlo`` matches
instructions, so an added node is the one that is really new rather than
the first node with the same op name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace

from xlacli.analysis.recompiles.sequence_match import matched_pairs
from xlacli.parse.ir_dump import IrGraph, IrNode, operand_id


@dataclass(frozen=True)
class IrDifference:
    """The first difference between an old and a new graph.

    ``kind`` is "ops" (ops added or removed), "shape" (same ops, a shape
    changed at ``new_node``) or "none" (same ops and shapes). An "ops"
    difference can also carry ``shape_change``: a node present in both
    graphs whose shape changed while its operands' did not (a size that the
    added ops do not explain).
    """

    kind: str
    old_node: IrNode | None = None
    new_node: IrNode | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    shape_change: tuple[IrNode, IrNode] | None = None
    # Repeated nodes one graph had and the other did not (a lazy-tensor artefact).
    folded: tuple[IrNode, ...] = ()
    # "shape": how many nodes changed shape, and how many of those changed dtype.
    reshaped: int = 1
    retyped: int = 0

    @property
    def distance(self) -> int:
        """How far apart the graphs are, to pick the nearest earlier graph: of
        two graphs with the same ops, the one fewer nodes differ from (a dtype
        counting more than a size), so that eager mode's one-op graphs of two
        tensors moved at one line are each compared with their own kind."""
        if self.kind == "ops":
            return 1000 + len(self.added) + len(self.removed)
        return min(999, self.reshaped + 10 * self.retyped) if self.kind == "shape" else 0


def compare_ir(
    old: IrGraph, new: IrGraph, normalised: tuple[IrOps, IrOps] | None = None
) -> IrDifference:
    """The first difference between two IR graphs, at the coarsest level that has one.

    ``normalised``: the two graphs' ``ir_ops``, when the caller has them already.
    """
    if normalised is None:
        old_nodes, new_nodes = normalise(old.nodes), normalise(new.nodes)
    else:
        old_nodes, new_nodes = list(normalised[0].nodes), list(normalised[1].nodes)
    old_ops = [node.op for node in old_nodes]
    new_ops = [node.op for node in new_nodes]
    if old_ops != new_ops:
        return _op_difference(old_nodes, new_nodes, old.nodes, new.nodes)
    pairs = list(zip(old_nodes, new_nodes, strict=True))
    origin = shape_origin(pairs, old_nodes, new_nodes)
    if origin is not None:
        before, after = pairs[origin]
        changed = [(a.shape.split("{")[0], b.shape.split("{")[0]) for a, b in pairs]
        return IrDifference(
            "shape",
            _original(old.nodes, before),
            _original(new.nodes, after),
            reshaped=sum(1 for a, b in changed if a != b),
            retyped=sum(1 for a, b in changed if a.split("[")[0] != b.split("[")[0]),
        )
    if len(old.nodes) != len(new.nodes):
        folded = _folded(new.nodes, new_nodes) or _folded(old.nodes, old_nodes)
        return IrDifference("none", folded=folded)
    return IrDifference("none")


def _folded(nodes: Sequence[IrNode], kept: Sequence[IrNode]) -> tuple[IrNode, ...]:
    ids = {node.id for node in kept}
    return tuple(node for node in nodes if node.id not in ids)


def _original(nodes: Sequence[IrNode], node: IrNode) -> IrNode:
    """The graph's own node for a normalised one (same id, operands as dumped)."""
    return nodes[_index(nodes, node)]


def _index(nodes: Sequence[IrNode], node: IrNode) -> int:
    return next(i for i, other in enumerate(nodes) if other.id == node.id)


def normalise(nodes: Sequence[IrNode]) -> list[IrNode]:
    """Fold exact repeats of an earlier node (with operands) into it."""
    canonical: dict[int, int] = {}
    seen: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
    kept = []
    for node in nodes:
        operands = tuple(_remap(operand, canonical) for operand in node.operands)
        key = (node.op, node.shape.split("{")[0], node.attributes, operands)
        if operands and key in seen:  # leaves (inputs, constants) differ by value
            canonical[node.id] = seen[key]
            continue
        seen.setdefault(key, node.id)
        kept.append(replace(node, operands=operands) if operands != node.operands else node)
    return kept


def _remap(operand: str, canonical: dict[int, int]) -> str:
    target = canonical.get(operand_id(operand))
    if target is None:
        return operand
    suffix = operand.lstrip("%").partition(".")[2]
    return f"%{target}.{suffix}" if suffix else f"%{target}"


def _identity(node: IrNode) -> tuple[str, str, object]:
    """What matches a node across graphs: op, shape and where it was made. A
    leaf's location is left out: a parameter's names the line that last
    updated it, which changes from step to step."""
    location = node.location if node.operands else None
    return node.op, node.shape.split("{")[0], location and (location.file, location.line)


def _op_difference(
    old_nodes: list[IrNode],
    new_nodes: list[IrNode],
    old_originals: Sequence[IrNode],
    new_originals: Sequence[IrNode],
) -> IrDifference:
    added_counts = Counter(n.op for n in new_nodes) - Counter(n.op for n in old_nodes)
    removed_counts = Counter(n.op for n in old_nodes) - Counter(n.op for n in new_nodes)
    added = _in_order(new_nodes, added_counts)
    removed = _in_order(old_nodes, removed_counts)
    pairs = matched_pairs([_identity(n) for n in old_nodes], [_identity(n) for n in new_nodes])
    matched_old = {i for i, _ in pairs}
    matched_new = {j for _, j in pairs}
    new_node = _most_telling([n for j, n in enumerate(new_nodes) if j not in matched_new], added)
    old_node = _most_telling([n for i, n in enumerate(old_nodes) if i not in matched_old], removed)
    return IrDifference(
        "ops",
        old_node and _original(old_originals, old_node),
        new_node and _original(new_originals, new_node),
        tuple(n.op for n in added),
        tuple(n.op for n in removed),
        _shape_change_between(old_nodes, new_nodes, old_originals, new_originals),
    )


def _in_order(nodes: list[IrNode], counts: Counter[str]) -> list[IrNode]:
    """The last ``counts[op]`` nodes of each op, in graph order (the extra ones)."""
    left = Counter(counts)
    picked = []
    for node in reversed(nodes):
        if left[node.op] > 0:
            left[node.op] -= 1
            picked.append(node)
    return picked[::-1]


def _most_telling(unmatched: list[IrNode], net: list[IrNode]) -> IrNode | None:
    """The unmatched node that best shows the change: one of the net added (or
    removed) ops, with a tensor shape rather than a scalar, with a location."""
    ops = {node.op for node in net}
    candidates = [node for node in unmatched if node.op in ops] or unmatched or net
    if not candidates:
        return None
    return min(
        enumerate(candidates),
        key=lambda item: (_is_scalar(item[1]), item[1].location is None, item[0]),
    )[1]


def _is_scalar(node: IrNode) -> bool:
    return "[]" in node.shape


def _shape_change_between(
    old_nodes: list[IrNode],
    new_nodes: list[IrNode],
    old_originals: Sequence[IrNode],
    new_originals: Sequence[IrNode],
) -> tuple[IrNode, IrNode] | None:
    """A node both graphs have (matched by op) whose shape was born changed."""
    pairs = [
        (old_nodes[i], new_nodes[j])
        for i, j in matched_pairs([n.op for n in old_nodes], [n.op for n in new_nodes])
    ]
    origin = shape_origin(pairs, old_nodes, new_nodes, strict=True)
    if origin is None:
        return None
    before, after = pairs[origin]
    return _original(old_originals, before), _original(new_originals, after)


def shape_origin(
    pairs: Sequence[tuple[IrNode, IrNode]],
    old_nodes: Sequence[IrNode],
    new_nodes: Sequence[IrNode],
    *,
    strict: bool = False,
) -> int | None:
    """Index (in ``pairs``) of the first matched node whose shape changed while
    its operands' did not; without ``strict``, else the first that changed."""
    old_by_id = {node.id: node for node in old_nodes}
    new_by_id = {node.id: node for node in new_nodes}
    first_changed = None
    for index, (before, after) in enumerate(pairs):
        if before.shape == after.shape:
            continue
        if strict and (before.location is None or before.location != after.location):
            continue  # across added ops, only a node made at the same line is the same
        if first_changed is None:
            first_changed = index
        if len(before.operands) == len(after.operands) and all(
            _same_shape(old_by_id.get(operand_id(a)), new_by_id.get(operand_id(b)))
            for a, b in zip(before.operands, after.operands, strict=True)
        ):
            return index
    return None if strict else first_changed


def _same_shape(before: IrNode | None, after: IrNode | None) -> bool:
    return before is not None and after is not None and before.shape == after.shape


@dataclass(frozen=True)
class IrOps:
    """A graph's normalised nodes and op counts: what ``ir_distance`` needs,
    computed once per graph rather than once per pair of graphs."""

    nodes: tuple[IrNode, ...]
    ops: tuple[str, ...]
    counts: Counter[str]


def ir_ops(graph: IrGraph) -> IrOps:
    nodes = tuple(normalise(graph.nodes))
    ops = tuple(node.op for node in nodes)
    return IrOps(nodes, ops, Counter(ops))


def ir_distance(old: IrOps, new: IrOps) -> int:
    """``compare_ir(old, new).distance`` without finding where the graphs
    differ: the nearest earlier graph is picked by this, and only it is
    compared in full (a storm of N graphs at one site: N comparisons, not N²/2)."""
    if old.ops != new.ops:
        return 1000 + (new.counts - old.counts).total() + (old.counts - new.counts).total()
    pairs = list(zip(old.nodes, new.nodes, strict=True))
    if not any(a.shape != b.shape for a, b in pairs):
        return 0
    # As IrDifference.distance for a "shape" difference: sizes, and dtypes tenfold.
    changed = [(a.shape.split("{")[0], b.shape.split("{")[0]) for a, b in pairs]
    reshaped = sum(1 for a, b in changed if a != b)
    retyped = sum(1 for a, b in changed if a.split("[")[0] != b.split("[")[0])
    return min(999, reshaped + 10 * retyped)
