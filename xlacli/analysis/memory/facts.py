"""Adds the memory, precision and checkpointing facts to a report's graphs.

Parsing only: every figure comes from the files a run folder keeps per graph
(``buffer-assignment.txt``, ``memory-usage.txt``, the HLO before and after
XLA's optimizations) and what the child sampled per step; nothing runs at
capture time but one look at the autocast state and the runtime's memory stats.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from xlacli.analysis.memory.checkpointing import checkpoint_facts
from xlacli.analysis.memory.peaks import graph_memory, run_memory, step_memory
from xlacli.analysis.memory.precision import graph_precision
from xlacli.hlo.model import HloModule
from xlacli.report.memory import RunMemory
from xlacli.report.run_report import GraphRecord
from xlacli.run_folder.step_events import StepEvent


class ParsedHlo(Protocol):
    def module(self, relative: str | None) -> HloModule | None: ...


def with_memory_facts(
    graphs: Sequence[GraphRecord],
    root: Path,
    hlo: ParsedHlo,
    step_events: Sequence[StepEvent],
    executions: Iterable[tuple[int | None, str | None]],
) -> tuple[list[GraphRecord], RunMemory]:
    """The graphs with ``memory``, ``precision`` and ``checkpoint`` set, and the run's memory."""
    sampled = run_memory((), step_events)  # what the child sampled; the step peaks come last
    autocast = sampled.autocast
    enriched = []
    for graph in graphs:
        before = hlo.module(graph.files.get("hlo_before"))
        after = hlo.module(graph.files.get("hlo_after"))
        step_autocast = autocast_at(autocast, graph.first_step)
        enriched.append(
            dataclasses.replace(
                graph,
                memory=graph_memory(root, graph.files, after),
                precision=graph_precision(before, after, step_autocast),
                checkpoint=checkpoint_facts(before, after),
            )
        )
    return enriched, dataclasses.replace(sampled, steps=step_memory(enriched, executions))


def autocast_at(autocast: Mapping[int, str], step: int | None) -> str | None:
    """Autocast in ``step``: as sampled then, else in the last sampled step before it
    (the child watches only the first steps); "" (sampled, off) is None."""
    if step is None:
        return None
    earlier = [sampled for sampled in autocast if sampled <= step]
    return autocast[max(earlier)] or None if earlier else None
