"""Peak memory, precision mix and barriers of two runs, graph by graph.

For ``xlacli diff-hlo RUN_A RUN_B`` on two variants of one model (plain,
bf16, checkpointed): graphs pair by hash, then by site, then the rest in
compile order, since a variant's graphs have other hashes and, when the
variant lives in another file, other sites.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xlacli.report.memory import PrecisionMix
from xlacli.report.run_report import GraphRecord, RunReport


@dataclass(frozen=True)
class GraphMemoryChange:
    """One pair of graphs: the figures on each side (None: not known)."""

    left: str  # graph hash
    right: str
    peak_bytes: tuple[int | None, int | None]
    peak_temp_bytes: tuple[int | None, int | None]
    dot_flops: tuple[dict[str, int], dict[str, int]]  # as requested, by operand type
    opt_barriers: tuple[int | None, int | None]

    @property
    def peak_change(self) -> float | None:
        """The relative change of the peak (+0.42 = 42% more), if both are known."""
        before, after = self.peak_bytes
        if before is None or after is None or before == 0:
            return None
        return (after - before) / before


def compare_memory(left: RunReport, right: RunReport) -> list[GraphMemoryChange]:
    """The memory figures of each pair of graphs of two runs."""
    return [_change(a, b) for a, b in pair_graphs(left.graphs, right.graphs)]


def pair_graphs(
    left: Sequence[GraphRecord], right: Sequence[GraphRecord]
) -> list[tuple[GraphRecord, GraphRecord]]:
    """Pairs by hash, then by site, then the remaining graphs in order."""
    free_left, free_right = list(left), list(right)
    pairs = []
    for key in ("hash", "site"):
        for graph in list(free_left):
            value = getattr(graph, key)
            match = [g for g in free_right if value and getattr(g, key) == value]
            if len(match) == 1:
                pairs.append((graph, match[0]))
                free_left.remove(graph)
                free_right.remove(match[0])
    pairs.extend(zip(free_left, free_right, strict=False))
    return pairs


def _change(left: GraphRecord, right: GraphRecord) -> GraphMemoryChange:
    return GraphMemoryChange(
        left=left.hash,
        right=right.hash,
        peak_bytes=(_peak(left), _peak(right)),
        peak_temp_bytes=(_temp(left), _temp(right)),
        dot_flops=(_flops(left), _flops(right)),
        opt_barriers=(_barriers(left), _barriers(right)),
    )


def _peak(graph: GraphRecord) -> int | None:
    return graph.memory.peak_bytes if graph.memory else None


def _temp(graph: GraphRecord) -> int | None:
    return graph.memory.peak_temp_bytes if graph.memory else None


def _flops(graph: GraphRecord) -> dict[str, int]:
    mix: PrecisionMix | None = graph.precision.requested if graph.precision else None
    return dict(mix.dot_flops) if mix else {}


def _barriers(graph: GraphRecord) -> int | None:
    return graph.checkpoint.opt_barriers if graph.checkpoint else None
