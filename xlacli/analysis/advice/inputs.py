"""What the advisors read: the run's graphs, steps and explained compiles, and each
graph's kept artifacts.

The advisors (``compile_cost``, ``scan_advice``, ``buckets``, ``value_reads``)
are pure functions of an ``AdviceInputs``; ``load_advice_inputs`` is the one
place that reads the run folder for them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from xlacli.hlo.model import HloModule
from xlacli.parse.frames import CodeRoots
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.ir_dump import IrNode, parse_ir_node
from xlacli.report.run_report import CompileEvent, GraphRecord, StepRecord

# Each step's mean value read at one user line: (wall, process CPU, the calling
# thread's CPU), seconds.
ReadTimes = tuple[tuple[float, float, float], ...]


@dataclass(frozen=True)
class GraphArtifacts:
    """One graph's record with the files the advisors read."""

    graph: GraphRecord
    stacks: tuple[StackedOp, ...] = ()  # HLO before optimization, with Python stacks
    ir_nodes: tuple[IrNode, ...] = ()
    optimized: HloModule | None = None  # HLO after optimization


@dataclass(frozen=True)
class AdviceInputs:
    """The run's graphs with their artifacts, its steps and explained compiles."""

    graphs: tuple[GraphArtifacts, ...]
    roots: CodeRoots
    events: tuple[CompileEvent, ...] = ()
    step_records: Sequence[StepRecord] = ()
    read_source: Callable[[str], str | None] = lambda _path: None
    read_times: Mapping[str | None, ReadTimes] = field(default_factory=dict)
    # Value reads the child timed in the loop's steps, per user line.
    read_counts: Mapping[str | None, int] = field(default_factory=dict)
    # Each step's first ``loss.backward()`` line (the child records them); "" when
    # the step ran a backward pass from no line of the user's.
    backward_lines: Mapping[int | None, str] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.step_records)


def load_advice_inputs(
    root: Path,
    graphs: Sequence[GraphRecord],
    roots: CodeRoots,
    loaders: tuple[
        Callable[[str | None], HloModule | None], Callable[[str | None], list[StackedOp] | None]
    ],
    load_ir: Callable[[Path, str | None], tuple[IrNode, ...]] | None = None,
    *,
    events: Sequence[CompileEvent] = (),
    step_records: Sequence[StepRecord] = (),
    read_times: Mapping[str | None, ReadTimes] | None = None,
    backward_lines: Mapping[int | None, str] | None = None,
    read_counts: Mapping[str | None, int] | None = None,
) -> AdviceInputs:
    """Read each graph's stacks, IR and optimized HLO (``loaders``: module, stacks)."""
    load_module, load_stacks = loaders
    read_ir = load_ir or read_ir_nodes
    artifacts = tuple(
        GraphArtifacts(
            graph=graph,
            stacks=tuple(load_stacks(graph.files.get("hlo_stacks")) or ()),
            ir_nodes=read_ir(root, graph.files.get("ir")),
            optimized=load_module(graph.files.get("hlo_after")),
        )
        for graph in graphs
    )
    return AdviceInputs(
        artifacts,
        roots,
        tuple(events),
        step_records,
        _source_reader(),
        read_times or {},
        read_counts or {},
        backward_lines or {},
    )


def read_ir_nodes(root: Path, relative: str | None) -> tuple[IrNode, ...]:
    """The nodes of a graph's kept IR file (none when it has no IR)."""
    if relative is None:
        return ()
    try:
        text = (root / relative).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(node for line in text.splitlines() if (node := parse_ir_node(line)))


def _source_reader() -> Callable[[str], str | None]:
    @lru_cache(maxsize=64)
    def read(path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    return read
