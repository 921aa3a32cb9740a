"""Where two lazy IR graphs of one sync site first differ.

Three levels, as a cache key is compared: the ops (a branch added or removed
some), then the shapes (the first node whose shape changed while its
operands' did not is where the change was born), then nothing: the IR is
the same and the difference hides in values torch_xla's IR text does not
print (constants, slice indices), which ``hlo_compare`` finds.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from xlacli.parse.ir_dump import IrGraph, IrNode, operand_id


@dataclass(frozen=True)
class IrDifference:
    """The first difference between an old and a new graph.

    ``kind`` is "ops" (ops added or removed), "shape" (same ops, a shape
    changed at ``new_node``) or "none" (same ops and shapes).
    """

    kind: str
    old_node: IrNode | None = None
    new_node: IrNode | None = None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    @property
    def distance(self) -> int:
        """How far apart the graphs are, to pick the nearest earlier graph."""
        if self.kind == "ops":
            return 1000 + len(self.added) + len(self.removed)
        return 1 if self.kind == "shape" else 0


def compare_ir(old: IrGraph, new: IrGraph) -> IrDifference:
    """The first difference between two IR graphs, at the coarsest level that has one."""
    old_ops = [node.op for node in old.nodes]
    new_ops = [node.op for node in new.nodes]
    if old_ops != new_ops:
        return _op_difference(old, new, old_ops, new_ops)
    origin = shape_origin(old, new)
    if origin is not None:
        return IrDifference("shape", old.nodes[origin], new.nodes[origin])
    return IrDifference("none")


def _op_difference(
    old: IrGraph, new: IrGraph, old_ops: list[str], new_ops: list[str]
) -> IrDifference:
    matcher = difflib.SequenceMatcher(a=old_ops, b=new_ops, autojunk=False)
    added: list[str] = []
    removed: list[str] = []
    first_old = first_new = None
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        removed += old_ops[i1:i2]
        added += new_ops[j1:j2]
        if first_old is None and first_new is None:
            first_old = old.nodes[i1] if i1 < i2 else None
            first_new = new.nodes[j1] if j1 < j2 else None
    return IrDifference("ops", first_old, first_new, tuple(added), tuple(removed))


def shape_origin(old: IrGraph, new: IrGraph) -> int | None:
    """Index of the first node whose shape changed while its operands' did not.

    Both graphs have the same ops in the same order, so node N of one matches
    node N of the other and operands match by id.
    """
    old_by_id = {node.id: node for node in old.nodes}
    new_by_id = {node.id: node for node in new.nodes}
    first_changed = None
    for index, (before, after) in enumerate(zip(old.nodes, new.nodes, strict=True)):
        if before.shape == after.shape:
            continue
        if first_changed is None:
            first_changed = index
        if all(_same_operand_shape(op, old_by_id, new_by_id) for op in after.operands):
            return index
    return first_changed


def _same_operand_shape(operand: str, old: dict[int, IrNode], new: dict[int, IrNode]) -> bool:
    before, after = old.get(operand_id(operand)), new.get(operand_id(operand))
    return before is not None and after is not None and before.shape == after.shape
