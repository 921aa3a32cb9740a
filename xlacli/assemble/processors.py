"""Stage 3 of the assembler: the analyses, each a processor writing its own section.

Every processor has one signature, ``(run, done) -> section``: it reads the
organised run and the sections of the processors declared before it (read only),
and returns its own section. None edits another's output, so a processor that
raises costs its own section and nothing else (see ``pipeline.py``).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlacli.analysis.dynamo.record import (
    EXTRACT_COUNTER,
    XlaEvents,
    apply_dynamo_causes,
    frame_callers,
    user_files,
    with_state_reads,
)
from xlacli.analysis.dynamo.record import build_dynamo_record as _build_dynamo_record
from xlacli.analysis.fallbacks import locate_fallbacks
from xlacli.analysis.memory.facts import with_memory_facts
from xlacli.analysis.memory.user_lines import (
    graph_walk,
    memory_at_user_lines,
    precision_at_user_lines,
)
from xlacli.analysis.recompiles.diff_check import checked_events
from xlacli.analysis.recompiles.explain import CompiledGraph, ExplainContext, explain_compiles
from xlacli.analysis.recompiles.locate import Locator
from xlacli.analysis.recompiles.served import judge_served
from xlacli.analysis.recompiles.unrolled import GraphNodes, unrolled_loops
from xlacli.analysis.spmd.collectives import Locate
from xlacli.analysis.spmd.graph import attach_spmd
from xlacli.assemble.advice import ADVISORS
from xlacli.assemble.organise import OrganisedRun, is_value_read, site_graph_runs
from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.eager_ops import is_eager
from xlacli.parse.frames import Frame
from xlacli.paths import source_line
from xlacli.report.memory import CheckpointFacts, GraphMemory, GraphPrecision, RunMemory
from xlacli.report.run_report import (
    CompileCause,
    CompileEvent,
    DynamoRecord,
    ExplanationCheck,
    FallbackOp,
    GraphRecord,
    ServedGraph,
    UnrolledLoop,
)
from xlacli.report.sharding import GraphSpmd
from xlacli.run_folder.events import ChildLog

# What a processor reads: the sections written before it, by name.
Sections = Mapping[str, Any]


@dataclass(frozen=True)
class Processor:
    """One analysis: the section it writes, how, and that section when it failed.

    ``reads``: the sections (declared before it) it is handed, and no other.
    ``beside``: it may run in a second process beside the others (``pipeline.py``):
    it reads no section and no processor reads its own.
    """

    section: str
    run: Callable[[OrganisedRun, Sections], Any]
    empty: Callable[[], Any]
    reads: tuple[str, ...] = ()
    beside: bool = False


@dataclass(frozen=True)
class GraphFacts:
    """A graph's memory, precision mix and checkpointing, parsed from its files."""

    memory: GraphMemory | None
    precision: GraphPrecision | None
    checkpoint: CheckpointFacts | None


@dataclass(frozen=True)
class MemorySection:
    """Each graph's facts by hash, and the run's memory (step peaks, device memory)."""

    graphs: Mapping[str, GraphFacts] = field(default_factory=dict)
    run: RunMemory | None = None


@dataclass(frozen=True)
class DynamoSection:
    """Dynamo's record (None when it never compiled a frame), and the frame each
    XLA compile lowered."""

    record: DynamoRecord | None = None
    owners: Sequence[int | None] = ()
    callers: Mapping[int, Frame] = field(default_factory=dict)  # frame -> the user's call


def memory_facts(run: OrganisedRun, done: Sections) -> MemorySection:
    """Memory, precision and checkpointing: ``analysis/memory/facts.py``."""
    graphs, memory = with_memory_facts(
        run.graphs,
        run.paths.root,
        run.hlo,
        run.raw.log.steps,
        zip(run.execute_steps, (event.graph_hash for event in run.raw.executions), strict=True),
    )
    backward = run.raw.log.backward_lines()
    facts = {g.hash: _at_user_lines(run, g, backward.get(g.first_step)) for g in graphs}
    return MemorySection(facts, memory)


def _at_user_lines(run: OrganisedRun, graph: GraphRecord, backward: str | None) -> GraphFacts:
    """The peak, buffers and f64 lines at the user's lines (``analysis/memory/user_lines.py``);
    ``backward``: the ``loss.backward()`` line of the graph's first step."""
    stacks, files = run.hlo.stacks, graph.files
    walk = graph_walk(
        stacks(files.get("hlo_after_stacks")), stacks(files.get("hlo_stacks")), run.roots
    )
    memory = graph.memory
    if memory is not None:
        memory = memory_at_user_lines(memory, walk, backward)
    precision = graph.precision
    if precision is not None:
        precision = precision_at_user_lines(precision, walk)
    return GraphFacts(memory, precision, graph.checkpoint)


def dynamo_record(run: OrganisedRun, done: Sections) -> DynamoSection:
    """torch.compile's frames, graph breaks and guard failures: ``analysis/dynamo/record.py``."""
    raw = run.raw
    xla = XlaEvents(raw.compiles, run.compile_steps, raw.executions, run.execute_steps)
    record, owners = _build_dynamo_record(
        raw.log,
        xla,
        mode=run.request.mode,
        extractions=raw.counters.get(EXTRACT_COUNTER, 0),
        user_files=user_files(xla, run.roots),
    )
    callers = frame_callers(record, xla, run.roots)
    return DynamoSection(with_state_reads(record, callers), owners, callers)


def _explain_context(run: OrganisedRun) -> ExplainContext:
    return ExplainContext(
        run.warmup,
        run.locator,
        shardings=run.shardings,
        new_phases=run.request.is_script,
        site_graphs=site_graph_runs(run),
        optimizer_files=frozenset(
            file for event in run.raw.log.metric_events for file in event.measures.optimizer_files
        ),
    )


def recompile_events(run: OrganisedRun, done: Sections) -> tuple[CompileEvent, ...]:
    """Every compile explained (``analysis/recompiles/explain.py``), with Dynamo's causes
    where Dynamo compiled the frame."""
    context = _explain_context(run)
    events = mark_eager(explain_compiles(list(run.compiled), context), run.raw.compiles)
    dynamo: DynamoSection = done.get("dynamo") or DynamoSection()
    if dynamo.record is not None:
        events = apply_dynamo_causes(
            events, dynamo.record, dynamo.owners, run.roots, dynamo.callers
        )
    return tuple(events)


def served_graphs(run: OrganisedRun, done: Sections) -> tuple[ServedGraph, ...]:
    """Graphs the run executed without compiling them, judged as compiles are
    (``analysis/recompiles/served.py``)."""
    events: tuple[CompileEvent, ...] = done.get("events") or ()
    if len(events) != len(run.compiled):  # the explainer failed: no causes to judge by
        events = tuple(
            CompileEvent(g.step, g.graph_hash, 0.0, False, CompileCause("unknown", None, None, ""))
            for g in run.compiled
        )
    return judge_served(run.compiled, events, run.served, _explain_context(run))


@dataclass(frozen=True)
class DiffChecked:
    """The explained compiles held against their structural diffs, and where they disagreed."""

    events: tuple[CompileEvent, ...] = ()
    checks: tuple[ExplanationCheck, ...] = ()


def diff_checked(run: OrganisedRun, done: Sections) -> DiffChecked:
    """Each recompile's cause checked against the HLO diff (``recompiles/diff_check.py``)."""
    files = {graph.hash: graph.files for graph in run.graphs}
    events, checks = checked_events(
        done.get("events") or (),
        lambda graph_hash: run.hlo.module(files.get(graph_hash, {}).get("hlo_before")),
    )
    return DiffChecked(events, checks)


def unrolled(run: OrganisedRun, done: Sections) -> tuple[UnrolledLoop, ...]:
    """Loops with no sync inside, unrolled into one graph: ``analysis/recompiles/unrolled.py``."""
    by_hash = {graph.graph_hash: graph for graph in run.compiled}
    sizes = {graph.hash: graph.hlo_instructions for graph in run.graphs}
    graphs = [
        GraphNodes(graph.graph_hash, graph.ir.nodes, sizes.get(graph.graph_hash), graph.site)
        for graph in by_hash.values()
        if graph.ir is not None
    ]
    files: dict[str, list[str] | None] = {}

    def read_lines(file: str) -> list[str] | None:
        if file not in files:
            try:
                files[file] = Path(file).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                files[file] = None
        return files[file]

    return unrolled_loops(
        graphs, lambda node, graph_hash: run.locator.node(node, by_hash[graph_hash])[0], read_lines
    )


def spmd_graphs(run: OrganisedRun, done: Sections) -> Mapping[str, GraphSpmd | None]:
    """Each graph's shardings and collectives, SPMD runs only: ``analysis/spmd/graph.py``."""
    graphs = attach_spmd(
        run.graphs,
        start=run.raw.log.start,
        context=run.shardings,
        load_module=run.hlo.module,
        locate_for=_metadata_locator(run.locator, run.compiled, run.raw.log),
    )
    return {graph.hash: graph.spmd for graph in graphs if graph.spmd is not None}


def fallback_ops(run: OrganisedRun, done: Sections) -> tuple[FallbackOp, ...]:
    """Ops that fell back to the CPU, at the user's line: ``analysis/fallbacks.py``."""
    raw = run.raw
    # The setup's and the tail's events share the step None: their counts add up.
    counts_by_step: dict[int | None, Counter[str]] = {}
    sites = []  # the value reads the child counted at their call sites
    for event in raw.log.metric_events:
        step, measures = event.step, event.measures
        counts = counts_by_step.setdefault(step, Counter())
        counts.update({n: c for n, c in measures.counters.items() if n.startswith("aten::")})
        sites += [(step, *site) for site in measures.fallback_sites]
    value_reads = [
        (run.execute_steps[index], user)
        for index, event in enumerate(raw.executions)
        if is_value_read(event) and (user := run.locator.trigger(event.frames)[0]) is not None
    ]
    return locate_fallbacks(counts_by_step, value_reads, source_line, sites)


def _metadata_locator(
    locator: Locator, compiled: Sequence[CompiledGraph], log: ChildLog
) -> Callable[[str], Locate]:
    """Per graph hash: the user's line behind an HLO instruction's metadata.

    An instruction with no source line came from the autograd engine, which
    runs the backward pass outside Python (a gradient, and the all-reduce SPMD
    makes of it): its line is the ``loss.backward()`` the graph's step ran."""
    first: dict[str, CompiledGraph] = {}
    for graph in compiled:
        first.setdefault(graph.graph_hash, graph)
    backward = log.backward_lines()

    def locate_for(graph_hash: str) -> Locate:
        graph = first.get(graph_hash)
        if graph is None:
            return lambda metadata: (None, None)
        from_backward = backward.get(graph.step)
        return lambda metadata: (
            locator.metadata(metadata, graph)
            if metadata.source_file
            else (from_backward if metadata.op_type else None, None)
        )

    return locate_for


def mark_eager(
    events: Sequence[CompileEvent], compiles: Sequence[AnalysisEvent]
) -> list[CompileEvent]:
    """Say which compiles were an eager op's graph (eager mode compiles one
    per op and shape; no torch_xla.compile or sync made it)."""
    return [
        dataclasses.replace(
            event, cause=dataclasses.replace(event.cause, detail=f"eager op: {event.cause.detail}")
        )
        if is_eager(compile_)
        else event
        for event, compile_ in zip(events, compiles, strict=True)
    ]


# The declared order: a processor reads only the sections above it.
# Those ``beside`` split a large run's work about evenly between two processes
# (a 50-layer decoder's: memory facts and compile cost by line, 1.7 s, against
# the explanations, their diff check, unrolled loops and the scan advice, 1.3 s).
PROCESSORS: tuple[Processor, ...] = (
    Processor("memory", memory_facts, MemorySection, beside=True),
    Processor("dynamo", dynamo_record, DynamoSection),
    Processor("events", recompile_events, tuple, reads=("dynamo",)),
    Processor("diff_checked", diff_checked, DiffChecked, reads=("events",)),
    Processor("served_graphs", served_graphs, tuple, reads=("events",)),
    Processor("unrolled_loops", unrolled, tuple),
    Processor("spmd", spmd_graphs, dict, beside=True),
    Processor("fallback_ops", fallback_ops, tuple, beside=True),
    # Compile cost by line; scan, bucket and value-read advice (assemble/advice.py).
    *(
        Processor(section, run, empty, reads=reads, beside=beside)
        for section, run, empty, reads, beside in ADVISORS
    ),
)
