"""Eager mode's op graphs, which torch_xla's debug log never mentions.

With ``torch_xla.experimental.eager_mode(True)`` every op runs at once: an op
that meets a new shape compiles a small graph (``UncachedCompile``), and every
op runs one (``ExecuteComputation``). PT_XLA_DEBUG writes its "Compilation
Analysis" and "Execution Analysis" blocks only for the graphs a sync built
(``torch_xla.compile``, ``torch.compile``, a value read), and the
``CompileTime``/``ExecuteTime`` metrics take no sample for the eager ones.

The IR dump (``XLA_SAVE_TENSORS_FILE``) has them all: one block per graph run,
in order, with its hash and Python frames. A graph's first block is its
compile (torch_xla compiles each hash once), so the dump's new hashes, in
order, are every compile, the XLA dump's modules in the same order; its blocks
are every execution. The logged events keep their place in that order: each
is the next block with its hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.ir_dump import IrGraph

# The cause given to a graph eager mode compiled or ran for one op.
EAGER_CAUSE = "eager op"


@dataclass(frozen=True)
class MergedEvents:
    """Every compile (or execution), and which of them the debug log had."""

    events: tuple[AnalysisEvent, ...]
    logged: tuple[int, ...]  # index in ``events`` of each logged event, in order

    def aligned(self, samples: Sequence[float]) -> list[float | None]:
        """The logged events' timed samples at their places; None for eager ones."""
        times: list[float | None] = [None] * len(self.events)
        for sample, index in zip(samples, self.logged, strict=False):
            times[index] = sample
        return times


def merge_eager_events(
    logged: Sequence[AnalysisEvent], ir_graphs: Sequence[IrGraph], kind: str, counted: int
) -> MergedEvents | None:
    """The logged events with eager mode's op graphs put in between.

    Args:
        logged: the debug log's compiles (or executions), in order.
        ir_graphs: the IR dump's blocks, in order.
        kind: "compile" (a hash's first block) or "execute" (every block).
        counted: torch_xla's own count (``UncachedCompile``, executions).

    Returns None when there is nothing to add (every event was logged) or the
    IR dump does not account for torch_xla's count (then the logged events
    stand alone, as before).
    """
    if counted <= len(logged):
        return None
    blocks = _first_blocks(ir_graphs) if kind == "compile" else list(ir_graphs)
    if len(blocks) != counted:
        return None
    events: list[AnalysisEvent] = []
    places: list[int] = []
    for block in blocks:
        if len(places) < len(logged) and logged[len(places)].graph_hash == block.graph_hash:
            places.append(len(events))
            events.append(logged[len(places) - 1])
        else:
            events.append(_eager_event(block, kind))
    if len(places) != len(logged):
        return None
    return MergedEvents(tuple(events), tuple(places))


def _first_blocks(ir_graphs: Sequence[IrGraph]) -> list[IrGraph]:
    seen: set[str | None] = set()
    first = []
    for graph in ir_graphs:
        if graph.graph_hash not in seen:
            seen.add(graph.graph_hash)
            first.append(graph)
    return first


def _eager_event(block: IrGraph, kind: str) -> AnalysisEvent:
    return AnalysisEvent(
        kind=kind,
        cause=EAGER_CAUSE,
        graph_hash=block.graph_hash,
        inputs=None,
        outputs=None,
        frames=block.frames,
    )


def is_eager(event: AnalysisEvent) -> bool:
    return event.cause == EAGER_CAUSE
