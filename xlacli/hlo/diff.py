"""The structural diff of two modules: match, then classify every instruction."""

from __future__ import annotations

import dataclasses
from collections import deque

from xlacli.hlo.changes import (
    ADDED,
    CHANGED,
    REMOVED,
    Change,
    InstructionRef,
    ModuleDiff,
    ModuleSide,
    SourceRef,
)
from xlacli.hlo.fingerprint import Fingerprints, comparable_attributes, fingerprint
from xlacli.hlo.gc_pause import gc_paused
from xlacli.hlo.graph import HloGraph, build_graph
from xlacli.hlo.match import Matching, match_graphs
from xlacli.hlo.model import HloModule
from xlacli.hlo.patterns import group_patterns
from xlacli.parse.frames import outside_xlacli
from xlacli.parse.stack_walk import SourceWalk
from xlacli.paths import split_location

# Each side's walk from a library line to the user's, when its stacks were dumped.
Walks = tuple[SourceWalk | None, SourceWalk | None]
_SOURCE_SEARCH_LIMIT = 32  # nodes visited to lend metadata to an instruction without any
_LITERAL_WIDTH = 40


def diff_modules(
    left: HloModule,
    right: HloModule,
    label: str = "",
    paired_by: str = "",
    walks: Walks = (None, None),
) -> ModuleDiff:
    """Compare two modules by structure.

    Instructions are matched by what they compute, not by name (see
    ``xlacli.hlo.match``); each is then unchanged, changed (with reasons),
    added (right only) or removed (left only), and each change carries the
    framework op and source line from its metadata.

    Args:
        left: The module before.
        right: The module after.
        label: A name for the pair in reports (default: the module name, or
            ``left → right`` when the names differ).
        paired_by: How the pair was found, for the report.
        walks: Each side's walk from a library line to the user's
            (``parse/stack_walk.py``); a change's source is then the user's line.
    """
    with gc_paused():
        left_graph, right_graph = build_graph(left), build_graph(right)
        left_fp, right_fp = fingerprint(left_graph), fingerprint(right_graph)
        matching = match_graphs(left_graph, left_fp, right_graph, right_fp)
        classifier = _Classifier(left_graph, left_fp, right_graph, right_fp, matching, walks)
        unchanged, changes = classifier.classify()
    return ModuleDiff(
        label=label or (right.name if left.name == right.name else f"{left.name} → {right.name}"),
        left=_side(left),
        right=_side(right),
        unchanged=unchanged,
        changes=tuple(changes),
        patterns=group_patterns(changes),
        header_changes=_header_changes(left, right),
        paired_by=paired_by,
    )


def _side(module: HloModule) -> ModuleSide:
    return ModuleSide(
        module.filename, module.name, module.instruction_count, dict(module.opcode_counts())
    )


def _header_changes(left: HloModule, right: HloModule) -> tuple[str, ...]:
    keys = set(left.attributes) | set(right.attributes)
    return tuple(
        sorted(key for key in keys if left.attributes.get(key) != right.attributes.get(key))
    )


class _Classifier:
    def __init__(
        self,
        left: HloGraph,
        left_fp: Fingerprints,
        right: HloGraph,
        right_fp: Fingerprints,
        matching: Matching,
        walks: Walks = (None, None),
    ):
        self.left, self.left_fp = left, left_fp
        self.walks = walks
        self.right, self.right_fp = right, right_fp
        self.matching = matching

    def classify(self) -> tuple[int, list[Change]]:
        """Count the unchanged instructions and list the changes: changed, added, removed."""
        changed, removed = [], []
        unchanged = 0
        exact = self.matching.exact
        for node, other in enumerate(self.matching.left_to_right):
            if other < 0:
                removed.append(
                    Change(
                        REMOVED,
                        _ref(self.left, node),
                        None,
                        source=_source(self.left, node, self.walks[0]),
                    )
                )
            elif exact[node]:
                unchanged += 1
            else:
                change = self._compare(node, other)
                if change is None:
                    unchanged += 1
                else:
                    changed.append(change)
        added = [
            Change(
                ADDED, None, _ref(self.right, node), source=_source(self.right, node, self.walks[1])
            )
            for node, other in enumerate(self.matching.right_to_left)
            if other < 0
        ]
        added.sort(key=lambda change: change.right.line if change.right else 0)
        return unchanged, changed + added + removed

    def _compare(self, node: int, other: int) -> Change | None:
        before, after = self.left.nodes[node], self.right.nodes[other]
        reasons: list[str] = []
        details: list[str] = []
        if before.opcode != after.opcode:
            reasons.append("opcode")
            details.append(f"opcode {before.opcode} → {after.opcode}")
        if before.shape != after.shape:
            same_sizes = before.shape.without_layout() == after.shape.without_layout()
            reasons.append("layout" if same_sizes else "shape")
            details.append(f"{reasons[-1]} {before.shape} → {after.shape}")
        if before.literal != after.literal:
            reasons.append("constant")
            details.append(f"constant {_short(before.literal)} → {_short(after.literal)}")
        attribute_details = self._attribute_details(node, other)
        if attribute_details:
            reasons.append("attributes")
            details.extend(attribute_details)
        self._compare_children(node, other, reasons, details)
        if not reasons:
            return None
        source = _source(self.right, other, self.walks[1]) or _source(
            self.left, node, self.walks[0]
        )
        return Change(
            CHANGED,
            _ref(self.left, node),
            _ref(self.right, other),
            tuple(reasons),
            tuple(details),
            source,
        )

    def _attribute_details(self, node: int, other: int) -> list[str]:
        before, after = self.left.nodes[node], self.right.nodes[other]
        details = []
        if before.parameter_number != after.parameter_number:
            details.append(f"parameter {before.parameter_number} → {after.parameter_number}")
        if before.attributes is not after.attributes:
            old = dict(comparable_attributes(before.attributes))
            new = dict(comparable_attributes(after.attributes))
            for key in sorted(old.keys() | new.keys()):
                if old.get(key) != new.get(key):
                    details.append(f"{key} {old.get(key, '(none)')} → {new.get(key, '(none)')}")
        return details

    def _compare_children(
        self, node: int, other: int, reasons: list[str], details: list[str]
    ) -> None:
        operand_count = len(self.left.nodes[node].operands)
        other_operand_count = len(self.right.nodes[other].operands)
        left_kids, right_kids = self.left.children[node], self.right.children[other]
        partners = [self.matching.left_to_right[kid] for kid in left_kids[:operand_count]]
        expected = list(right_kids[:other_operand_count])
        if partners != expected:
            reasons.append("operands")
            if operand_count != other_operand_count:
                details.append(f"operands {operand_count} → {other_operand_count}")
            else:
                rewired = sum(1 for a, b in zip(partners, expected, strict=True) if a != b)
                details.append(f"{rewired} of {operand_count} operands rewired")
        left_callees = [self.left_fp.subgraph[kid] for kid in left_kids[operand_count:]]
        right_callees = [self.right_fp.subgraph[kid] for kid in right_kids[other_operand_count:]]
        if left_callees != right_callees:
            reasons.append("calls")
            names = ", ".join(self.right.nodes[other].called_computations)
            details.append(f"called computation {names} differs")


def _ref(graph: HloGraph, node: int) -> InstructionRef:
    instruction = graph.nodes[node]
    return InstructionRef(
        graph.computation_of[node],
        instruction.name,
        instruction.opcode,
        str(instruction.shape),
        instruction.line,
    )


def _source(graph: HloGraph, node: int, walk: SourceWalk | None = None) -> SourceRef | None:
    """The node's metadata source, or else the nearest one among its users and operands.

    Instructions XLA adds (copies, transposes, fused parameters) carry no
    metadata; the closest instruction that does is the best guess of the
    framework op they serve. Users come first at each distance, and a called
    computation's root leads to its callers.
    """
    seen = {node}
    queue = deque([node])
    while queue and len(seen) <= _SOURCE_SEARCH_LIMIT:
        current = queue.popleft()
        metadata = graph.nodes[current].metadata
        if metadata.op_type or metadata.source_file:
            source = SourceRef(
                metadata.op_type,
                metadata.op_name,
                metadata.source_file,
                metadata.source_line,
                inherited=current != node,
            )
            return _walked(source, graph.nodes[current].name, walk)
        for neighbour in (*graph.users[current], *graph.children[current]):
            if neighbour not in seen:
                seen.add(neighbour)
                queue.append(neighbour)
    return None


def _walked(source: SourceRef, name: str, walk: SourceWalk | None) -> SourceRef:
    """The source at the user's line when the stacks walk it there, the library
    line kept; a line of xlacli's own harness (moving an input) is no one's line."""
    walked = walk.walk(source.location, name) if walk else None
    if walked is not None:
        file, line = split_location(walked.user)
        return dataclasses.replace(source, file=file, line=line or 0, library=walked.library)
    if source.file and outside_xlacli(source.location) is None:
        return dataclasses.replace(source, file="", line=0)
    return source


def _short(literal: str | None) -> str:
    if literal is None:
        return "(none)"
    return literal if len(literal) <= _LITERAL_WIDTH else literal[: _LITERAL_WIDTH - 1] + "…"
