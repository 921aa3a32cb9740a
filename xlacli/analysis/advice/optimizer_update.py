"""The optimizer's per-parameter update in a training graph, as the scan advisor
weighs it.

``optimizer.step()`` runs the same ops on every parameter (``torch/optim/`` on
their stacks), so N identical layers' parameters each bring the same update:
repeated content, which XLA compiles as copies of what it has seen, and which
``scan_layers`` does not remove (the parameters stay the layers' own).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from xlacli.analysis.advice.scan_cost import DATA_OPS
from xlacli.parse.hlo_stacks import StackedOp

_OPTIMIZER = "/torch/optim/"


@dataclass(frozen=True)
class OptimizerUpdate:
    """The update's ops in one graph."""

    instructions: int  # every op of the update, its constants and inputs included
    # How often each computation recurs: the same op, shape and optimizer lines
    # (one parameter's update, or the same step on another of the same shape).
    counts: tuple[int, ...] = ()

    @property
    def computations(self) -> int:
        return sum(self.counts)

    @property
    def repeated(self) -> int:
        """Computations after the first of their kind: copies to XLA."""
        return self.computations - len(self.counts)

    def per_layer(self, layers: int) -> int:
        """One layer's update when ``layers`` identical layers each bring one: of
        each computation, the copies that come in multiples of ``layers`` (the
        other parameters' copies left out)."""
        return sum(count // layers for count in self.counts) if layers > 0 else 0


def optimizer_update(ops: Iterable[StackedOp]) -> OptimizerUpdate:
    """The ops an optimizer's step put in a graph; empty for a graph without one."""
    instructions = 0
    kinds: Counter[tuple[str, str, tuple[tuple[str, int], ...]]] = Counter()
    for op in ops:
        lines = tuple((f.file, f.line) for f in op.stack if _OPTIMIZER in f.file)
        if not lines:
            continue
        instructions += 1
        if op.op_type not in DATA_OPS:
            kinds[(op.op_type, op.shape, lines)] += 1
    return OptimizerUpdate(instructions, tuple(sorted(kinds.values(), reverse=True)))


NO_UPDATE = OptimizerUpdate(0)  # a graph without an optimizer step
