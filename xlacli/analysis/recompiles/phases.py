"""Phases and per-site steady state: which compiles are recompiles to fix.

A *site* is what makes torch_xla run a graph: a sync (the script's
``xm.mark_step()``, an ``MpDeviceLoader`` iteration, xlacli's end-of-step
sync) or a value read, identified by its Python frames. Each site has its own
warm-up, its first ``warmup`` runs. A compile is a **steady-state recompile**
only when a site that finished its own warm-up compiles again: a global step
index cannot tell a train loop's recompile from an evaluation loop's first
graph.

Every compile belongs to a phase:

- ``setup``: before the loop (a wrapper that syncs while it shards or
  flattens parameters, a model file's loading): never a recompile;
- ``loop``: the training loop and the sites that started in its warm-up;
- ``new_phase``: a site whose first graph comes after the loop's warm-up
  (evaluation, an epoch's tail, a final read), and that site's own warm-up:
  reported and counted, never a recompile until that site is warm;
- ``after_loop``: after the last step (a final ``accuracy.item()``);
- ``periodic``: a warm site's second graph that alternates with the graph
  it was compared with and runs again from the cache (a logging op every N
  steps folded into the next batch's graph, gradient accumulation's update
  every k steps): ops added or removed, never a change of shapes, dtypes,
  values or shardings. It compiled once and the loop does not keep
  compiling, so it is not a steady-state recompile, in scripts and model
  files alike. The run must show it: with too few steps to see it recur, it
  stays a steady-state recompile.

A model file's steps all run the same ``step()``, so it has no new phases
and keeps the global step rule: any compile after the warm-up (a site that
first appears, ``if step >= 3 and loss > 1.0`` reading a value) is a change
inside the loop and a steady-state recompile. In a script, a value read that first
appears in a step where a warm site recompiles is part of that recompile
(the read cut the warm graph in two), so it is steady-state too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xlacli.parse.frames import Frame
from xlacli.report.steps import LOOP_PHASE as LOOP
from xlacli.report.steps import OTHER_PHASE as OTHER
from xlacli.report.steps import SETUP_PHASE as SETUP
from xlacli.run_folder.step_events import StepEvent

NEW_PHASE = "new_phase"
# A graph that computed another site's live tensor (analysis/recompiles/explain.py).
CARRIED_OVER = "carried_over"
AFTER_LOOP = "after_loop"
PERIODIC = "periodic"
PHASES = (SETUP, LOOP, NEW_PHASE, PERIODIC, AFTER_LOOP)
# How the terminal and the HTML page name a phase.
PHASE_WORDS = {
    SETUP: "setup",
    LOOP: "loop",
    NEW_PHASE: "new phase",
    PERIODIC: "periodic graph",
    AFTER_LOOP: "after the loop",
}
# Compiles that are part of warming up wherever they happen.
EXPECTED_CATEGORIES = frozenset({"optimizer_state", "lazy_artefact"})
# Compiles whose graph only gained or lost ops (no shape, dtype, value or
# sharding changed): when the graph alternates with its site's earlier graph
# and recurs from the cache, it is a periodic graph, not a recompile.
STRUCTURE_CATEGORIES = frozenset({"graph_structure", "host_sync", CARRIED_OVER})
Site = tuple[Frame, ...]


@dataclass(frozen=True)
class SiteCompile:
    """What the steady-state rule needs to know about one compile."""

    site: Site
    step: int | None
    step_phase: str  # the child's phase of its step: setup, loop or after_loop
    iteration: int | None  # its loop iteration (None: setup or after the loop)
    site_runs: int  # earlier steps in which its site ran a graph
    category: str
    # The earlier graph it was compared with ran again after it, and then it
    # ran again itself, from the cache (``alternates``).
    periodic: bool = False


@dataclass(frozen=True)
class Verdict:
    """A compile's phase, and whether it is a steady-state recompile."""

    phase: str
    steady_state: bool


def judge(
    compiles: Sequence[SiteCompile], warmup: int, *, new_phases: bool = True
) -> list[Verdict]:
    """One verdict per compile, in order (see the module docstring for the rule).

    ``new_phases``: False for a model file, whose every step runs one function.
    """
    site_phase: dict[Site, str] = {}
    verdicts = []
    for item in compiles:
        # A site seen only in the setup (a loader whose first batch flushed the
        # setup's work) starts afresh in the loop.
        seen = site_phase.get(item.site)
        first_at_site = seen is None or (seen == SETUP and item.step_phase == LOOP)
        if first_at_site:
            site_phase.pop(item.site, None)
        late = item.iteration is not None and item.iteration >= warmup
        phase = item.step_phase
        if phase == LOOP and first_at_site and late and new_phases:
            phase = NEW_PHASE
        if item.step_phase == LOOP:
            phase = site_phase.setdefault(item.site, phase)
        else:
            site_phase.setdefault(item.site, phase)
        # A model file keeps the global rule: its steps all run one step(), so
        # any compile after the warm-up is a change (Dynamo compiles and runs a
        # frame's graphs from different stacks, so its sites do not count runs).
        site_warm = not first_at_site and item.site_runs >= warmup
        warm = site_warm if new_phases else late
        steady = item.step_phase == LOOP and warm and item.category not in EXPECTED_CATEGORIES
        if steady and item.periodic and item.category in STRUCTURE_CATEGORIES:
            phase, steady = PERIODIC, False
        verdicts.append(Verdict(phase, steady))
    return _reads_cutting_warm_graphs(compiles, verdicts)


def _reads_cutting_warm_graphs(
    compiles: Sequence[SiteCompile], verdicts: list[Verdict]
) -> list[Verdict]:
    """A value read first seen in a step where a warm site recompiles cut that
    graph in two: it is part of the steady-state recompile, not a new phase
    (and part of the periodic graph, when the warm site's new graph is one)."""
    paired = list(zip(compiles, verdicts, strict=True))
    # A warm graph that took in another place's live tensor was not cut by a read.
    steady_steps = {
        item.step
        for item, verdict in paired
        if verdict.steady_state and item.category != CARRIED_OVER
    }
    periodic_steps = {item.step for item, verdict in paired if verdict.phase == PERIODIC}
    judged = []
    for item, verdict in paired:
        read = item.category == "host_sync" and item.step is not None
        if read and item.step in steady_steps:
            verdict = Verdict(LOOP, True)
        elif read and item.step in periodic_steps and verdict.phase == NEW_PHASE:
            verdict = Verdict(PERIODIC, False)
        judged.append(verdict)
    return judged


def alternates(step: int | None, variant: str, site_runs: Sequence[tuple[int, str]]) -> bool:
    """Whether graph ``variant``, compiled at ``step``, alternates with its site's
    other graphs: after it, another graph ran at the site, and after that the
    variant ran there again, from the cache. ``site_runs``: the (step, graph
    hash) of each graph the site ran, in order. (The other graph need not be
    the one it was compared with: Trainer's training graph is first compiled
    at its logging sync, another site.)"""
    if step is None:
        return False
    other = next((ran for ran, graph in site_runs if ran > step and graph != variant), None)
    return other is not None and any(ran > other and graph == variant for ran, graph in site_runs)


def site_runs_before(
    runs: Iterable[tuple[Site, int | None]],
) -> dict[Site, list[int]]:
    """Per site, the sorted steps in which it ran a graph (executions: site, step)."""
    steps: dict[Site, set[int]] = {}
    for site, step in runs:
        if step is not None:
            steps.setdefault(site, set()).add(step)
    return {site: sorted(found) for site, found in steps.items()}


def count_before(steps: Sequence[int], step: int | None) -> int:
    """How many of ``steps`` (sorted) come before ``step`` (None: after them all)."""
    if step is None:
        return len(steps)
    return sum(1 for ran in steps if ran < step)


def loop_iterations(step_phases: Sequence[tuple[int, str]]) -> dict[int, int]:
    """Step -> its loop iteration (0-based), for the steps of the loop phase; a
    step at another place than the loop's (an evaluation's sync) gets the
    iterations done before it, so its sites know how late they start."""
    iterations: dict[int, int] = {}
    done = 0
    for step, phase in step_phases:
        if phase == LOOP:
            iterations[step] = done
            done += 1
        elif phase == OTHER:
            iterations[step] = done
    return iterations


def script_step_phases(steps: Sequence[StepEvent]) -> dict[int, str]:
    """Step -> setup or loop, from the child's step events.

    The child recognises a script's loop as it runs (``capture/loop_finder.py``)
    and writes, from then on, the step the loop started at (which may be an
    earlier sync of the same line). Steps before it are setup. A model file's
    steps, and a script whose loop was never recognised, are all the loop.
    """
    start = next((e.measures.loop_start for e in steps if e.measures.loop_start is not None), None)
    return {
        event.step: SETUP
        if start is not None and event.step < start
        else OTHER
        if event.measures.phase == OTHER
        else LOOP
        for event in steps
        if event.step is not None  # a step event has its number
    }


@dataclass(frozen=True)
class TimelineEdges:
    """Where a timeline of steps draws its boundaries (indices into the steps)."""

    loop_start: int | None  # the first loop step after setup syncs (None: no setup)
    warm: int | None  # the first step after the loop's own warm-up (None: not reached)


def timeline_edges(step_phases: Sequence[str], warmup: int) -> TimelineEdges:
    """The boundaries of a timeline whose steps have these phases, in order.

    The warm-up is the loop's: its first ``warmup`` iterations, counted after
    the setup syncs, not the first ``warmup`` syncs of the run (a new phase's
    sites have warm-ups of their own, and their compiles are marked as such).
    """
    setup = sum(1 for phase in step_phases if phase == SETUP)
    loop_indices = [index for index, phase in enumerate(step_phases) if phase == LOOP]
    warm = loop_indices[warmup] if 0 < warmup < len(loop_indices) else None
    return TimelineEdges(loop_start=setup if 0 < setup < len(step_phases) else None, warm=warm)


def loop_step_count(step_phases: Sequence[str]) -> int:
    """The steps of a run that are loop iterations (what ``--steps N`` counts): not
    its setup syncs, nor the syncs at another place than the loop's."""
    return sum(1 for phase in step_phases if phase not in (SETUP, OTHER))


class LoopProgress:
    """The loop iterations among the child's step events so far (a progress count),
    and the compiles, kept as the events come in: each call reads only the step
    events added since the last (the parent polls a 10,000-step run 5 times a
    second; reading every event each time was O(steps))."""

    def __init__(self) -> None:
        self.read_steps = 0  # step events read so far
        self.compiles = 0  # UncachedCompile in the step events read so far
        self._start: int | None = None  # the loop's first step, once the child found it
        self._numbers: list[int] = []  # step numbers read before the loop was found
        self._in_loop = 0  # steps read at or after the loop's start

    def read(self, steps: Sequence[StepEvent]) -> int:
        """Loop iterations done, reading ``steps[read_steps:]``."""
        for event in steps[self.read_steps :]:
            self.read_steps += 1
            measures = event.measures
            self.compiles += measures.counters.get("UncachedCompile", 0)
            if measures.phase == OTHER:  # an evaluation's sync: no iteration
                continue
            number = event.step or 0
            if self._start is None and measures.loop_start is not None:
                self._start = measures.loop_start
                self._in_loop = sum(1 for n in self._numbers if n >= self._start)
                self._numbers = []
            if self._start is None:
                self._numbers.append(number)
            elif number >= self._start:
                self._in_loop += 1
        return self.read_steps if self._start is None else self._in_loop
