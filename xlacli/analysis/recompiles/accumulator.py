"""A known lazy pattern: an accumulator that starts as a Python number.

``correct = 0`` then ``correct += pred.eq(target).sum()``: the first iteration
adds a tensor to the Python 0, which torch_xla bakes into the graph as a
constant (``prim::Constant``); from the second iteration on ``correct`` is a
device tensor, a graph input (``xla::device_data``) where the constant was.
One extra compile, the same in lazy, SPMD and every other mode. The fix is to
start the accumulator as a device tensor.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

from xlacli.analysis.recompiles.compiled import CompiledGraph, ExplainContext, make_cause
from xlacli.analysis.recompiles.ir_compare import IrDifference
from xlacli.parse.ir_dump import IrNode
from xlacli.report.run_report import CompileCause

CONSTANT = "prim::Constant"
DEVICE_DATA = "xla::device_data"
ACCUMULATOR_DETAIL = (
    "an accumulator that starts as a Python number: the first iteration adds to the "
    "Python value, baked into the graph as a constant; from the second on it is a device "
    "tensor, a graph input in its place (prim::Constant -> xla::device_data, {shape})"
)
ACCUMULATOR_HINT = (
    "start it as a device tensor, e.g. `correct = torch.zeros((), dtype=torch.long, "
    "device=device)`: every iteration then runs one graph"
)
# `total += x`, or `total = total + x`
_ACCUMULATES = re.compile(r"(\w[\w.]*)\s*(\+=|=\s*\1\s*\+)")


def accumulator_cause(
    old: CompiledGraph,
    new: CompiledGraph,
    difference: IrDifference,
    context: ExplainContext,
    read_line: Callable[[str], str | None],
) -> CompileCause | None:
    """The pattern, when a constant of the old graph became device data of the
    new one at a user line that accumulates (``+=``); else None."""
    if CONSTANT not in difference.removed or DEVICE_DATA not in difference.added:
        return None
    if old.ir is None or new.ir is None:
        return None
    # The constant must be gone at that line: a tensor made on the device
    # (`torch.zeros((), device=device)`) is a constant of the first graph too,
    # but at the line that made it, and the accumulating line keeps its own.
    constants = _constants(old.ir.nodes) - _constants(new.ir.nodes)
    for node in new.ir.nodes:
        if node.op != DEVICE_DATA or _key(node) not in constants:
            continue
        user, library = context.locator.node(node, new)
        text = read_line(user) if user and library is None else None
        if text and _ACCUMULATES.search(text):
            detail = ACCUMULATOR_DETAIL.format(shape=node.shape.split("{")[0])
            return make_cause("python_accumulator", user, None, detail, hint=ACCUMULATOR_HINT)
    return None


def _key(node: IrNode) -> tuple[str, object]:
    """Shape and line: the constant and the device data stand in the same place."""
    location = node.location
    where = (location.file, location.line) if location is not None else None
    return node.shape.split("{")[0], where


def _constants(nodes: Iterable[IrNode]) -> Counter[tuple[str, object]]:
    return Counter(_key(node) for node in nodes if node.op == CONSTANT)
