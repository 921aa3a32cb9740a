"""Matching the instructions of two modules by structure, not by name.

The approach of OpenXLA's ``hlo_diff``, in four steps:

1. Identical subgraphs: a subgraph fingerprint found exactly once on each
   side pairs the two nodes and, position by position, everything below
   them. Nodes are visited users-first, so the largest subgraphs go first.
   Leaves (parameters, constants) of called computations do not seed
   this: ``param_1 = f32[16] parameter(1)`` means something only through
   the fusion that calls its computation, so it is matched through that.
2. Top-down: below a matched pair, children still unmatched are paired,
   identical subgraphs first, then by position or opcode when similar.
3. Bottom-up: above a matched pair, users still unmatched are paired when
   they have the same opcode and use the pair at the same operand position.
4. Steps 2 and 3 repeat until nothing new matches; identical subgraphs left
   over in equal numbers on both sides are paired in order. Dead code (what
   nothing uses) is paired this way before step 2 too: nothing above it
   tells identical copies apart, and step 3 could cross them.
5. Inside two computations whose roots match, what nothing uses (unused
   parameters of a sort comparator, unused constants) is paired by
   signature (local fingerprint) in text order, and steps 2 and 3 run again.

Whatever is left is only on one side: removed (left) or added (right).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xlacli.hlo.fingerprint import Fingerprints
from xlacli.hlo.graph import HloGraph
from xlacli.hlo.model import Instruction


@dataclass(slots=True, eq=False)
class Matching:
    """Which node matches which; -1 where a node has no partner.

    Attributes:
        left_to_right: For each left node, its right partner or -1.
        right_to_left: For each right node, its left partner or -1.
        exact: For each left node, 1 when it was matched as part of an
            identical subgraph (it and everything below it are unchanged).
    """

    left_to_right: list[int]
    right_to_left: list[int]
    exact: bytearray


class _Side:
    """One graph, its fingerprints and the name of its entry computation."""

    def __init__(self, graph: HloGraph, fingerprints: Fingerprints):
        self.graph = graph
        self.fingerprints = fingerprints
        self.entry = graph.module.entry.name
        # Computations nothing calls (the entry, or a module with no ENTRY) stand alone.
        called = {
            name
            for computation in graph.module.computations
            for instruction in computation.instructions
            for name in instruction.called_computations
        }
        self.uncalled = {c.name for c in graph.module.computations if c.name not in called}
        self.uncalled.add(self.entry)

    def can_seed(self, node: int) -> bool:
        """Whether an identical subgraph at ``node`` may be matched on its own."""
        return bool(self.graph.children[node]) or self.graph.computation_of[node] in self.uncalled


def match_graphs(
    left: HloGraph, left_fp: Fingerprints, right: HloGraph, right_fp: Fingerprints
) -> Matching:
    """Match the nodes of two graphs by structure (see the module docstring)."""
    matcher = _Matcher(_Side(left, left_fp), _Side(right, right_fp))
    matcher.match_unique_subgraphs()
    if matcher.matched == len(left.nodes) == len(right.nodes):
        return matcher.matching  # renumbered or reordered, but the same program
    matcher.match_leftover_subgraphs(unused_only=True)
    matcher.match_entry_roots()
    matcher.propagate()
    if matcher.match_leftover_subgraphs():
        matcher.propagate()
    if matcher.match_inside_computations():
        matcher.propagate()
    return matcher.matching


class _Matcher:
    def __init__(self, left: _Side, right: _Side):
        self.left = left
        self.right = right
        self.matching = Matching(
            [-1] * len(left.graph), [-1] * len(right.graph), bytearray(len(left.graph))
        )
        self.matched = 0

    def match_unique_subgraphs(self) -> None:
        left_sub, right_sub = self.left.fingerprints.subgraph, self.right.fingerprints.subgraph
        left_count, right_count = Counter(left_sub), Counter(right_sub)
        # Built backwards so that the first node of each fingerprint wins.
        right_first = dict(zip(reversed(right_sub), range(len(right_sub) - 1, -1, -1), strict=True))
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        for node in reversed(self.left.graph.order):
            if left_to_right[node] >= 0:
                continue
            fp = left_sub[node]
            if right_count.get(fp) == 1 and left_count[fp] == 1:
                other = right_first[fp]
                seeds = self.left.can_seed(node) and self.right.can_seed(other)
                if right_to_left[other] < 0 and seeds:
                    self.match_subgraph(node, other)

    def match_entry_roots(self) -> None:
        left, right = self.left.graph, self.right.graph
        left_root = left.node_of(left.module.entry.root)
        right_root = right.node_of(right.module.entry.root)
        if (
            self.matching.left_to_right[left_root] < 0
            and self.matching.right_to_left[right_root] < 0
        ):
            self.match_node(left_root, right_root)

    def propagate(self) -> None:
        """Alternate top-down and bottom-up passes until nothing new matches.

        Both passes start from the unmatched left nodes, so that their cost
        follows the size of the change, not the size of the module.
        """
        left_to_right = self.matching.left_to_right
        while True:
            before = self.matched
            free = [node for node in self.left.graph.order if left_to_right[node] < 0]
            self._top_down(free)
            self._bottom_up(free)
            if self.matched == before:
                return

    def match_leftover_subgraphs(self, unused_only: bool = False) -> bool:
        """Pair identical subgraphs left unmatched in equal numbers on both sides.

        With ``unused_only``, only dead code (what nothing uses and is no
        root): run before propagation, because nothing above dead copies tells
        them apart, while bottom-up propagation through a live operand they
        share (one ``partition-id`` under every dead shard-offset computation
        of an SPMD module) would pair them by opcode and cross copies that
        differ above it (``multiply(offset, 2)`` with ``multiply(offset, 1)``).
        """
        left_free = self._free_seeds(self.left, self.matching.left_to_right, unused_only)
        right_free = self._free_seeds(self.right, self.matching.right_to_left, unused_only)
        left_sub, right_sub = self.left.fingerprints.subgraph, self.right.fingerprints.subgraph
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        left_count = Counter(left_sub[node] for node in left_free)
        stacks: dict[int, list[int]] = {}
        for node in reversed(right_free):  # popped users first
            stacks.setdefault(right_sub[node], []).append(node)
        stacks = {fp: nodes for fp, nodes in stacks.items() if len(nodes) == left_count[fp]}
        before = self.matched
        # Node by node, users first, not fingerprint by fingerprint: a computation nothing
        # calls must pair whole from its root, before its parameters could pair with the
        # identical parameters of another computation (cloned fusions before DCE).
        for node in left_free:
            stack = stacks.get(left_sub[node])
            if not stack or left_to_right[node] >= 0:
                continue
            while stack and right_to_left[stack[-1]] >= 0:
                stack.pop()
            if stack:
                self.match_subgraph(node, stack.pop())
        return self.matched != before

    def match_inside_computations(self) -> bool:
        """Pair what is left inside computations whose roots match, by signature and position."""
        left_nodes = self.left.graph.computation_nodes
        right_nodes = self.right.graph.computation_nodes
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        left_local, right_local = self.left.fingerprints.local, self.right.fingerprints.local
        left_users, right_users = self.left.graph.users, self.right.graph.users
        before = self.matched
        for left_root, nodes in left_nodes.values():
            partner = left_to_right[left_root]
            if partner < 0:
                continue
            right_root_name = self.right.graph.computation_of[partner]
            free: dict[int, list[int]] = {}
            for node in reversed(right_nodes[right_root_name][1]):
                if right_to_left[node] < 0 and not right_users[node]:
                    free.setdefault(right_local[node], []).append(node)
            if not free:
                continue
            for node in nodes:
                if left_to_right[node] < 0 and not left_users[node]:
                    candidates = free.get(left_local[node])
                    while candidates and right_to_left[candidates[-1]] >= 0:
                        candidates.pop()
                    if candidates:
                        self._pair(node, candidates.pop())
        return self.matched != before

    @staticmethod
    def _free_seeds(side: _Side, partner: list[int], unused_only: bool) -> list[int]:
        """Unmatched nodes that may seed a subgraph match, users first."""
        graph = side.graph
        users = graph.users if unused_only else []
        roots = {root for root, _ in graph.computation_nodes.values()} if unused_only else set()
        return [
            node
            for node in reversed(graph.order)
            if partner[node] < 0
            and side.can_seed(node)
            and not (unused_only and (users[node] or node in roots))
        ]

    def match_subgraph(self, left_node: int, right_node: int) -> None:
        """Match two identical subgraphs, node by node, position by position."""
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        exact = self.matching.exact
        left_children, right_children = self.left.graph.children, self.right.graph.children
        stack = [(left_node, right_node)]
        while stack:
            left_node, right_node = stack.pop()
            if left_to_right[left_node] >= 0 or right_to_left[right_node] >= 0:
                continue
            left_to_right[left_node] = right_node
            right_to_left[right_node] = left_node
            exact[left_node] = 1
            self.matched += 1
            kids = left_children[left_node]
            if kids:
                # Equal fingerprints, so equal child counts (strict would only slow this loop).
                stack.extend(zip(kids, right_children[right_node], strict=False))

    def match_node(self, left_node: int, right_node: int) -> None:
        """Match two nodes that differ (or whose subgraphs differ)."""
        self.matching.left_to_right[left_node] = right_node
        self.matching.right_to_left[right_node] = left_node
        self.matched += 1

    def _pair(self, left_node: int, right_node: int) -> None:
        if (
            self.left.fingerprints.subgraph[left_node]
            == self.right.fingerprints.subgraph[right_node]
        ):
            self.match_subgraph(left_node, right_node)
        else:
            self.match_node(left_node, right_node)

    def _top_down(self, free: list[int]) -> None:
        """Below matched users of each free node (users first), pair the children."""
        left_to_right, exact = self.matching.left_to_right, self.matching.exact
        left_children, right_children = self.left.graph.children, self.right.graph.children
        left_users = self.left.graph.users
        visited: set[int] = set()  # a user's children are paired once per pass, not per child
        for node in reversed(free):
            for user in left_users[node]:
                if left_to_right[node] >= 0:
                    break
                other = left_to_right[user]
                if other >= 0 and not exact[user] and right_children[other] and user not in visited:
                    visited.add(user)
                    self._pair_children(left_children[user], right_children[other])

    def _pair_children(self, left_kids: tuple[int, ...], right_kids: tuple[int, ...]) -> None:
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        left_free = [kid for kid in left_kids if left_to_right[kid] < 0]
        right_free = [kid for kid in right_kids if right_to_left[kid] < 0]
        if not left_free or not right_free:
            return
        right_sub = self.right.fingerprints.subgraph
        by_subgraph = {right_sub[kid]: kid for kid in reversed(right_free)}
        left_sub = self.left.fingerprints.subgraph
        for kid in left_free:
            other = by_subgraph.get(left_sub[kid], -1)
            if other >= 0 and right_to_left[other] < 0 and left_to_right[kid] < 0:
                self.match_subgraph(kid, other)
        if len(left_kids) == len(right_kids):
            for kid, other in zip(left_kids, right_kids, strict=True):
                if (
                    left_to_right[kid] < 0
                    and right_to_left[other] < 0
                    and self._similar(kid, other)
                ):
                    self.match_node(kid, other)
        # What is left pairs by opcode, each with the first free one of its kind in order:
        # same shape first, then any shape. Grouped, so a 700-operand tuple is not k².
        left_nodes, right_nodes = self.left.graph.nodes, self.right.graph.nodes
        for kind in (_opcode_and_shape, _opcode):
            waiting: dict[object, list[int]] = {}
            for other in reversed(right_free):
                if right_to_left[other] < 0:
                    waiting.setdefault(kind(right_nodes[other]), []).append(other)
            for kid in left_free:
                if left_to_right[kid] >= 0:
                    continue
                candidates = waiting.get(kind(left_nodes[kid]))
                while candidates and right_to_left[candidates[-1]] >= 0:
                    candidates.pop()
                if candidates:
                    self.match_node(kid, candidates.pop())

    def _bottom_up(self, free: list[int]) -> None:
        """Above matched children of each free node (children first), pair the users."""
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        left_users, right_users = self.left.graph.users, self.right.graph.users
        left_children = self.left.graph.children
        for node in free:
            for child in left_children[node]:
                if left_to_right[node] >= 0:
                    break
                other = left_to_right[child]
                if other < 0:
                    continue
                left_free = [user for user in left_users[child] if left_to_right[user] < 0]
                right_free = [user for user in right_users[other] if right_to_left[user] < 0]
                if left_free and right_free:
                    self._pair_users(child, other, left_free, right_free)

    def _pair_users(
        self, node: int, other: int, left_free: list[int], right_free: list[int]
    ) -> None:
        if len(left_free) == 1 and len(right_free) == 1:
            if self._similar(left_free[0], right_free[0]):
                self._pair(left_free[0], right_free[0])
            return
        left_to_right, right_to_left = self.matching.left_to_right, self.matching.right_to_left
        left_nodes, right_nodes = self.left.graph.nodes, self.right.graph.nodes
        left_children, right_children = self.left.graph.children, self.right.graph.children
        left_local, right_local = self.left.fingerprints.local, self.right.fingerprints.local
        candidates: dict[tuple[str, int], list[int]] = {}
        for user in right_free:
            key = (right_nodes[user].opcode, right_children[user].index(other))
            candidates.setdefault(key, []).append(user)
        for user in left_free:
            found = candidates.get((left_nodes[user].opcode, left_children[user].index(node)))
            if not found or left_to_right[user] >= 0:
                continue
            free = [candidate for candidate in found if right_to_left[candidate] < 0]
            if free:
                same = [c for c in free if right_local[c] == left_local[user]]
                self._pair(user, (same or free)[0])

    def _similar(self, left_node: int, right_node: int) -> bool:
        """Same opcode; or same shape and at least one operand in common at the same position."""
        left, right = self.left.graph.nodes[left_node], self.right.graph.nodes[right_node]
        if left.opcode == right.opcode:
            return True
        if left.shape.without_layout() != right.shape.without_layout():
            return False
        left_to_right = self.matching.left_to_right
        left_sub, right_sub = self.left.fingerprints.subgraph, self.right.fingerprints.subgraph
        pairs = zip(
            self.left.graph.children[left_node], self.right.graph.children[right_node], strict=False
        )
        return any(left_to_right[a] == b or left_sub[a] == right_sub[b] for a, b in pairs)


def _opcode_and_shape(instruction: Instruction) -> object:
    return instruction.opcode, instruction.shape


def _opcode(instruction: Instruction) -> object:
    return instruction.opcode
