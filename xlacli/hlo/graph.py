"""A module as one flat graph, the form the fingerprints and the matcher work on.

Every instruction of every computation is a node, numbered in text order.
A node's children are its operands, then the ROOT of each computation it
calls: a fusion's fused computation is part of what the fusion computes, so
a change inside it reaches the fusion's fingerprint, and names of called
computations never need to be compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xlacli.errors import HloParseError
from xlacli.hlo.model import HloModule, Instruction


@dataclass(slots=True, eq=False)
class HloGraph:
    """Flat arrays over the instructions of a module, indexed by node number.

    Attributes:
        module: The module the graph was built from.
        nodes: Every instruction, computations in text order.
        computation_of: For each node, the name of its computation.
        children: For each node, its operands' nodes then its callees' root nodes.
        order: All nodes in post-order (children before the nodes that use them).
        computation_nodes: For each computation, its root node and its nodes.
    """

    module: HloModule
    nodes: list[Instruction]
    computation_of: list[str]
    children: list[tuple[int, ...]]
    order: list[int]
    computation_nodes: dict[str, tuple[int, range]]
    _users: list[list[int]] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.nodes)

    def node_of(self, instruction: Instruction) -> int:
        """The node number of an instruction of this graph's module."""
        for node in range(len(self.nodes) - 1, -1, -1):  # roots are printed last
            if self.nodes[node] is instruction:
                return node
        raise ValueError(f"%{instruction.name} is not an instruction of this graph")

    @property
    def users(self) -> list[list[int]]:
        """For each node, the nodes that have it as a child (built on first use)."""
        if self._users is None:
            users: list[list[int]] = [[] for _ in self.nodes]
            for node, children in enumerate(self.children):
                for child in children:
                    users[child].append(node)
            self._users = users
        return self._users


def build_graph(module: HloModule) -> HloGraph:
    """Number a module's instructions and link operands and called computations.

    Raises:
        HloParseError: The instructions form a cycle (the text parsed, but it
            is not a program XLA could have printed).
    """
    nodes: list[Instruction] = []
    computation_of: list[str] = []
    indexes: list[dict[str, int]] = []
    roots: dict[str, int] = {}
    computation_nodes: dict[str, tuple[int, range]] = {}
    for computation in module.computations:
        base = len(nodes)
        index = {
            instruction.name: base + k for k, instruction in enumerate(computation.instructions)
        }
        indexes.append(index)
        count = len(computation.instructions)
        root = roots[computation.name] = index[computation.root.name]
        computation_nodes[computation.name] = (root, range(base, base + count))
        nodes.extend(computation.instructions)
        computation_of.extend([computation.name] * count)
    children: list[tuple[int, ...]] = []
    in_order = True  # every child printed before its user: text order is a post-order
    for computation, index in zip(module.computations, indexes, strict=True):
        for instruction in computation.instructions:
            linked = tuple(map(index.__getitem__, instruction.operands))
            if instruction.called_computations:
                linked += tuple(
                    roots[name] for name in instruction.called_computations if name in roots
                )
            if in_order and linked and max(linked) >= len(children):
                in_order = False
            children.append(linked)
    order = list(range(len(nodes))) if in_order else _post_order(children, nodes, module.filename)
    return HloGraph(module, nodes, computation_of, children, order, computation_nodes)


def _post_order(
    children: list[tuple[int, ...]], nodes: list[Instruction], filename: str
) -> list[int]:
    # Text with some users printed before their operands (hand-edited or
    # reordered): a node whose children are all done is emitted directly,
    # and only the rest take the DFS.
    done = bytearray(len(children))
    order: list[int] = []
    is_done = done.__getitem__
    for node, kids in enumerate(children):
        if done[node]:
            continue
        if all(map(is_done, kids)):
            done[node] = 1
            order.append(node)
        else:
            _visit(node, children, done, order, nodes, filename)
    return order


def _visit(
    start: int,
    children: list[tuple[int, ...]],
    done: bytearray,
    order: list[int],
    nodes: list[Instruction],
    filename: str,
) -> None:
    on_path = {start}
    stack = [(start, iter(children[start]))]
    while stack:
        node, pending = stack[-1]
        for kid in pending:
            if done[kid]:
                continue
            if kid in on_path:
                cycle = nodes[kid]
                raise HloParseError(
                    filename,
                    cycle.line,
                    1,
                    "instructions that form no cycle",
                    f"a cycle through %{cycle.name}",
                )
            on_path.add(kid)
            stack.append((kid, iter(children[kid])))
            break
        else:
            stack.pop()
            on_path.discard(node)
            done[node] = 1
            order.append(node)
