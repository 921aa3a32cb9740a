"""Which graph inputs are a loss's target: padding them needs the loss's ignored
index (or a mask), never the padding value of the model's inputs.

A graph's IR names the loss op (``aten::nll_loss``, which ``cross_entropy``
lowers to) and its operands; the target is its second operand, reached from a
graph input (``xla::device_data``) through ops that only reshape it
(``labels.flatten()``). The input's shape (element type and sizes) is what a
recompile's cause names, so the two meet there.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from xlacli.parse.ir_dump import IrNode, operand_id

# Losses whose target is an operand, by IR op: those with an ignored index first.
IGNORING_LOSSES = ("aten::nll_loss", "aten::nll_loss2d", "aten::nll_loss_forward")
OTHER_LOSSES = (
    "aten::mse_loss",
    "aten::l1_loss",
    "aten::smooth_l1_loss",
    "aten::huber_loss",
    "aten::binary_cross_entropy",
    "aten::binary_cross_entropy_with_logits",
    "aten::kl_div",
)
# Ops that pass a tensor on with its elements unchanged.
_RESHAPING = frozenset(
    {
        "aten::view",
        "aten::reshape",
        "aten::permute",
        "aten::squeeze",
        "aten::unsqueeze",
        "aten::clone",
        "aten::_to_copy",
        "aten::contiguous",
        "aten::expand",
        "aten::flatten",
    }
)
_SHAPE = re.compile(r"^(\w+\[[\d,]*\])")


def loss_targets(nodes: Iterable[IrNode]) -> Counter[tuple[str, str]]:
    """``(input shape, loss op)`` of each graph input a loss takes as its target,
    counted (``s64[2,9]``, ``nll_loss``)."""
    by_id = {node.id: node for node in nodes}
    found: Counter[tuple[str, str]] = Counter()
    seen: set[int] = set()
    for node in by_id.values():
        if node.op not in (*IGNORING_LOSSES, *OTHER_LOSSES) or len(node.operands) < 2:
            continue
        source = _graph_input(by_id, operand_id(node.operands[1]))
        if source is not None and source.id not in seen:
            seen.add(source.id)
            found[(shape_key(source.shape), node.op.removeprefix("aten::"))] += 1
    return found


def ignores_an_index(loss: str) -> bool:
    """Whether the loss skips targets equal to its ``ignore_index`` (-100 by default)."""
    return f"aten::{loss}" in IGNORING_LOSSES


def shape_key(shape: str) -> str:
    """``s64[2,9]{1,0}`` -> ``s64[2,9]``: element type and sizes, no layout."""
    match = _SHAPE.match(shape.strip())
    return match.group(1) if match else shape.strip()


def _graph_input(by_id: dict[int, IrNode], node_id: int) -> IrNode | None:
    node = by_id.get(node_id)
    for _ in range(16):  # a chain of reshapes is short
        if node is None:
            return None
        if node.is_device_data:
            return node
        if node.op not in _RESHAPING or not node.operands:
            return None
        node = by_id.get(operand_id(node.operands[0]))
    return None
