"""Stage 2 of the assembler: the raw run organised into steps, graphs and files.

torch_xla and XLA describe each compile in three places that share no key but
their order: the debug log's "Compilation Analysis" blocks (graph hash,
frames), the ``CompileTime`` metric's samples (seconds), and the XLA dump's
modules (numbered in compile order). Executions likewise pair the debug log's
"Execution Analysis" blocks with ``ExecuteTime`` samples. The child records
counter deltas per step, which places every compile and execution in its step.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from xlacli.analysis.recompiles.explain import CompiledGraph
from xlacli.analysis.recompiles.locate import Locator
from xlacli.analysis.recompiles.phases import (
    AFTER_LOOP,
    LOOP,
    OTHER,
    SETUP,
    count_before,
    loop_iterations,
    script_step_phases,
    site_runs_before,
)
from xlacli.analysis.spmd.graph import ShardingContext, sharding_context
from xlacli.assemble.graph_files import HloCache, graph_sizes, organize_graph_files
from xlacli.assemble.read import RawRun
from xlacli.parse.debug_log import AnalysisEvent
from xlacli.parse.eager_ops import is_eager
from xlacli.parse.frames import (
    CodeRoots,
    Frame,
    first_user_frame,
    framework_frame,
    in_compiled_backward,
    in_dynamo_bridge,
)
from xlacli.parse.ir_dump import IrGraph
from xlacli.report.run_report import GraphRecord, StepRecord, StepRecords
from xlacli.run_folder.events import ChildLog
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.step_events import Measures, StepEvent

HOST_SYNC_CAUSE = "access tensor value"


def is_value_read(event: AnalysisEvent) -> bool:
    """The graph ran because Python read a tensor's value. torch_xla says so
    of the Dynamo bridge's own input syncs too: those are not the user's."""
    return HOST_SYNC_CAUSE in event.cause and not in_dynamo_bridge(event.frames)


# A graph runs through ExecuteComputation, or ExecuteReplicated under SPMD.
EXECUTION_COUNTERS = ("ExecuteComputation", "ExecuteReplicated")


@dataclass(frozen=True)
class OrganisedRun:
    """A run's raw events placed in steps and grouped into graphs, with the graphs'
    files in ``graphs/<hash>/``: what every analysis reads, and none may change.

    ``graphs`` are the records before any analysis (no memory, SPMD...); ``compiled``
    is every compile in order, as the recompile explainer reads it. The locator
    caches what it learns about frames, but answers the same for every reader.
    """

    raw: RawRun
    paths: RunPaths
    request: CaptureRequest
    warmup: int
    roots: CodeRoots
    hlo: HloCache
    compile_steps: list[int | None]
    execute_steps: list[int | None]
    graphs: tuple[GraphRecord, ...]
    compiled: tuple[CompiledGraph, ...]
    # Graphs the run executed but never compiled: a cache served them (torch_xla's
    # in-process cache warmed by an earlier test, its persistent cache). Their
    # first execution each, in order, as a compile is described (no IR, no time).
    served: tuple[CompiledGraph, ...]
    step_records: StepRecords
    locator: Locator
    shardings: ShardingContext


def organise_run(
    raw: RawRun,
    paths: RunPaths,
    request: CaptureRequest,
    *,
    warmup: int,
    roots: CodeRoots,
    hlo: HloCache,
) -> OrganisedRun:
    """Place compiles and executions in their steps, group them by graph and move
    each graph's kept files into ``graphs/<hash>/``."""
    setup = raw.log.setup.measures if raw.log.setup else Measures()
    compile_steps = _event_steps(raw.log, "UncachedCompile", len(raw.compiles))
    execute_steps = _event_steps(raw.log, EXECUTION_COUNTERS, len(raw.executions))
    ir_by_hash = _first_ir_by_hash(raw.ir_graphs, raw.compiles)
    graphs = _graph_records(raw, paths, compile_steps, ir_by_hash, roots, hlo)
    files_by_hash = {graph.hash: graph.files for graph in graphs}
    locator = Locator(
        roots=roots,
        model_dir=Path(request.model_path).parent,
        load_hlo=lambda h: hlo.module(files_by_hash.get(h, {}).get("hlo_before")),
        load_stacks=lambda h: hlo.stacks(files_by_hash.get(h, {}).get("hlo_stacks")),
        entry_site=setup.entry_site,
        inputs_site=setup.inputs_site,
    )
    # Each distinct stack once: the parser shares equal frame tuples, and a long
    # run's executions repeat a few stacks thousands of times.
    stacks = {id(event.frames): event.frames for event in (*raw.compiles, *raw.executions)}
    for frames in stacks.values():
        locator.learn_frames(frames)
    return OrganisedRun(
        raw=raw,
        paths=paths,
        request=request,
        warmup=warmup,
        roots=roots,
        hlo=hlo,
        compile_steps=compile_steps,
        execute_steps=execute_steps,
        graphs=tuple(graphs),
        compiled=tuple(_compiled_graphs(raw, compile_steps, execute_steps, ir_by_hash, roots)),
        served=tuple(_served_graphs(raw, compile_steps, execute_steps, roots)),
        step_records=_step_records(raw, compile_steps, execute_steps, warmup),
        locator=locator,
        shardings=sharding_context(raw.log.start, raw.log.shardings),
    )


def _graph_records(
    raw: RawRun,
    paths: RunPaths,
    compile_steps: list[int | None],
    ir_by_hash: dict[str, IrGraph],
    roots: CodeRoots,
    hlo: HloCache,
) -> list[GraphRecord]:
    """One record per distinct graph, its files moved into ``graphs/<hash>/``."""
    entry_site = raw.log.setup.measures.entry_site if raw.log.setup else None
    backward_lines = raw.log.backward_lines()
    executions_by_hash = _group_by_hash(raw.executions)
    graphs = []
    for graph_hash, indices in _group_by_hash(raw.compiles).items():
        first = indices[0]
        exec_indices = executions_by_hash.get(graph_hash, [])
        exec_times = _timed(raw.execute_times_s, exec_indices)
        module = raw.modules[first] if first < len(raw.modules) else None
        ir = ir_by_hash.get(graph_hash)
        files = organize_graph_files(paths, graph_hash, ir, module)
        if ir is not None and "ir" in files:
            hlo.remember_ir(files["ir"], ir.nodes)  # the advisors' IR, not parsed again
        trigger, site = _site(
            raw.compiles[first],
            roots,
            entry_site,
            backward_lines.get(compile_steps[first]),
        )
        graphs.append(
            GraphRecord(
                hash=graph_hash,
                site=site,
                trigger=trigger,
                # The sync's stack without xlacli's own harness frames.
                frames=tuple(str(f) for f in raw.compiles[first].frames if not roots.is_xlacli(f)),
                framework_site=_framework_site(raw.compiles[first].frames, roots),
                ir_nodes=len(ir.nodes) if ir else None,
                compilations=len(indices),
                compile_time_s=sum(_at(raw.compile_times_s, i) for i in indices),
                executions=len(exec_indices),
                execute_time_s=_steady_median(exec_times),
                total_execute_time_s=sum(exec_times),
                first_step=compile_steps[first],
                files=files,
                spmd=None,  # SPMD runs: the spmd processor's section
                **graph_sizes(paths.root, files, hlo),
            )
        )
    return graphs


@dataclass(frozen=True)
class ExecutionRecord:
    """One graph execution: its step, its graph and how long it ran."""

    step: int | None
    graph_hash: str | None
    time_s: float | None


def execution_records(raw: RawRun) -> list[ExecutionRecord]:
    """Every execution of the run, in order."""
    steps = _event_steps(raw.log, EXECUTION_COUNTERS, len(raw.executions))
    return [
        ExecutionRecord(
            steps[index],
            event.graph_hash,
            raw.execute_times_s[index] if index < len(raw.execute_times_s) else None,
        )
        for index, event in enumerate(raw.executions)
    ]


def site_graph_runs(run: OrganisedRun) -> dict[tuple[Frame, ...], tuple[tuple[int, str], ...]]:
    """Per site (the sync's frames), the (step, graph hash) of each graph it ran,
    in order (runs outside every step left out)."""
    runs: dict[tuple[Frame, ...], list[tuple[int, str]]] = {}
    for event, step in zip(run.raw.executions, run.execute_steps, strict=True):
        if event.graph_hash is not None and step is not None:
            runs.setdefault(event.frames, []).append((step, event.graph_hash))
    return {site: tuple(ran) for site, ran in runs.items()}


def _steady_median(times: list[float]) -> float | None:
    """Median execution time, leaving out the first run when there are others:
    a program's first run pays one-time costs (on XLA:CPU, 30 ms for a graph
    whose later runs take 0.2 ms)."""
    if not times:
        return None
    return statistics.median(times[1:] if len(times) > 1 else times)


def _first_ir_by_hash(
    ir_graphs: Sequence[IrGraph], compiles: Sequence[AnalysisEvent]
) -> dict[str, IrGraph]:
    """The IR of each graph's first sync.

    torch_xla's dump has one block per sync, named by graph hash; xlacli's has
    one per compile, named by the compile's index (``child/graph_ir.py``).
    """
    first: dict[str, IrGraph] = {}
    for graph in ir_graphs:
        if graph.graph_hash is None and graph.compile_index is not None:
            graph = _hashed(graph, compiles)
        if graph.graph_hash is not None:
            first.setdefault(graph.graph_hash, graph)
    return first


def _hashed(graph: IrGraph, compiles: Sequence[AnalysisEvent]) -> IrGraph:
    """xlacli's block for compile N, named by that compile's graph hash."""
    index = graph.compile_index
    if index is None or index >= len(compiles) or compiles[index].graph_hash is None:
        return graph
    return dataclasses.replace(graph, graph_hash=compiles[index].graph_hash)


def _compiled_graphs(
    raw: RawRun,
    compile_steps: list[int | None],
    execute_steps: list[int | None],
    ir_by_hash: dict[str, IrGraph],
    roots: CodeRoots,
) -> list[CompiledGraph]:
    by_step = {event.step: event.measures for event in raw.log.steps}
    backward_lines = raw.log.backward_lines()
    entry_site = raw.log.setup.measures.entry_site if raw.log.setup else None
    # Per-site steady state (analysis/recompiles/phases.py): each compile's phase, its
    # loop iteration, and how many earlier steps ran a graph at its site.
    step_phases = script_step_phases(raw.log.steps)
    phases = _event_phases(raw.log, step_phases, "UncachedCompile", len(raw.compiles))
    iterations = loop_iterations(sorted(step_phases.items()))
    site_steps = site_runs_before(
        (_run_site(event, roots), step)
        for event, step in zip(raw.executions, execute_steps, strict=True)
    )
    compiled = []
    for index, event in enumerate(raw.compiles):
        step = compile_steps[index]
        measures = by_step.get(step, _NOTHING)
        compiled.append(
            CompiledGraph(
                index=index,
                step=step,
                graph_hash=event.graph_hash or f"unknown-{index}",
                compile_time_s=_at(raw.compile_times_s, index),
                frames=event.frames,
                value_read=is_value_read(event),
                ir=ir_by_hash.get(event.graph_hash or ""),
                input_signature=tuple(measures.input_signature),
                input_origins=dict(measures.input_origins),
                fallbacks_in_step=frozenset(
                    name for name in measures.counters if name.startswith("aten::")
                ),
                step_phase=phases[index],
                iteration=iterations.get(step) if step is not None else None,
                site_runs=count_before(site_steps.get(_run_site(event, roots), []), step),
                site=_site(event, roots, entry_site, backward_lines.get(step))[1],
                eager=is_eager(event),
            )
        )
    return compiled


def _served_graphs(
    raw: RawRun,
    compile_steps: list[int | None],
    execute_steps: list[int | None],
    roots: CodeRoots,
) -> list[CompiledGraph]:
    """The first execution of each graph the run never compiled, described as
    its compile would be: its step, site, phase, loop iteration and the site's
    earlier runs (what ``analysis/recompiles/phases.py`` judges a graph change by)."""
    compiled = {event.graph_hash for event in raw.compiles}
    firsts: dict[str, int] = {}
    for index, event in enumerate(raw.executions):
        if event.graph_hash and event.graph_hash not in compiled:
            firsts.setdefault(event.graph_hash, index)
    if not firsts:
        return []
    by_step = {event.step: event.measures for event in raw.log.steps}
    step_phases = script_step_phases(raw.log.steps)
    iterations = loop_iterations(sorted(step_phases.items()))
    site_steps = site_runs_before(
        (_run_site(event, roots), step)
        for event, step in zip(raw.executions, execute_steps, strict=True)
    )
    entry_site = raw.log.setup.measures.entry_site if raw.log.setup else None
    served: list[CompiledGraph] = []
    for graph_hash, index in firsts.items():
        event, step = raw.executions[index], execute_steps[index]
        measures = by_step.get(step, _NOTHING)
        served.append(
            CompiledGraph(
                index=len(compile_steps) + len(served),
                step=step,
                graph_hash=graph_hash,
                compile_time_s=0.0,
                frames=event.frames,
                value_read=is_value_read(event),
                ir=None,
                input_signature=tuple(measures.input_signature),
                input_origins=dict(measures.input_origins),
                step_phase=_judged(step_phases.get(step, LOOP)) if step is not None else AFTER_LOOP,
                iteration=iterations.get(step) if step is not None else None,
                site_runs=count_before(site_steps.get(_run_site(event, roots), []), step),
                site=_site(event, roots, entry_site, None)[1],
            )
        )
    return served


def _judged(phase: str) -> str:
    """The phase the steady-state rule judges a step by: another place's sync as the loop's."""
    return LOOP if phase == OTHER else phase


def _run_site(event: AnalysisEvent, roots: CodeRoots) -> tuple[Frame, ...]:
    """The site whose runs count toward a graph's warm-up. torch.compile's
    graph is compiled inside the bridge's extraction and run by its cached
    call, two stacks that share only the user's frames: those are its site."""
    if in_dynamo_bridge(event.frames) or _COMPILED_BY.get(event.cause.strip()) == "dynamo":
        return tuple(frame for frame in event.frames if roots.is_user(frame))
    return event.frames


def _event_phases(
    log: ChildLog, step_phases: dict[int, str], counter: str, count: int
) -> list[str]:
    """The phase of each compile, in order, as ``_event_steps`` places them:
    the setup event's (a model file's loading, a script's syncs before its
    loop), a step's own, or after the loop (a script's work after its last sync)."""
    phases: list[str] = []
    for event in log.metric_events:
        if event is log.setup:
            phase = SETUP
        elif event is log.tail and event.step is None:
            phase = AFTER_LOOP
        else:
            phase = LOOP if event.step is None else step_phases.get(event.step, LOOP)
            # A sync at another place than the loop's is judged as the loop's
            # steps are (its site's own warm-up), only never counted as one.
            phase = LOOP if phase == OTHER else phase
        phases.extend([phase] * _count_in(event.measures, (counter,)))
    phases.extend([LOOP] * (count - len(phases)))
    return phases[:count]


def _event_steps(log: ChildLog, counter: str | tuple[str, ...], count: int) -> list[int | None]:
    """The step of each compile (or execution), in order; None outside steps."""
    names = (counter,) if isinstance(counter, str) else counter
    steps: list[int | None] = []
    for event in log.metric_events:
        steps.extend([event.step] * _count_in(event.measures, names))
    # Events past the last recorded delta (the child died mid-step) belong to
    # the step that was running.
    running = len(log.steps)
    steps.extend([running] * (count - len(steps)))
    return steps[:count]


# The timed metric each counter's events leave one sample in.
_SAMPLES_OF: dict[str, Callable[[Measures], Sequence[float]]] = {
    "UncachedCompile": lambda m: m.compile_time_ns,
    "ExecuteComputation": lambda m: m.execute_time_ns,
    # SPMD: ExecuteReplicatedTime shares the list
    "ExecuteReplicated": lambda m: m.execute_time_ns,
}
_NOTHING = Measures()  # a step without an event (the child died before writing it)


def _count_in(event: Measures, names: tuple[str, ...]) -> int:
    """How many compiles (or executions) a step event saw.

    Executions: the child's own count when it gives one (``executions``: a
    step that did not wait for its device counts its graphs' cache lookups,
    ``child/metric_deltas.py``), else the counters; either way the timed
    metric's new samples when they are more: torch_xla's Dynamo bridge
    clears the counters while it partitions an FX graph, and its cached-graph
    runs (``_run_cached_graph``) never bump ``ExecuteComputation``;
    ``CompileTime``/``ExecuteTime`` samples are kept.
    """
    if names == EXECUTION_COUNTERS and event.executions is not None:
        counted = int(event.executions)
    else:
        counted = sum(event.counters.get(name, 0) for name in names)
    samples = next((_SAMPLES_OF[name] for name in names if name in _SAMPLES_OF), None)
    return max(counted, len(samples(event)) if samples else 0)


def _group_by_hash(events: Sequence[AnalysisEvent]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for index, event in enumerate(events):
        groups.setdefault(event.graph_hash or f"unknown-{index}", []).append(index)
    return groups


def _at(values: Sequence[float | None], index: int) -> float:
    value = values[index] if index < len(values) else None
    return value if value is not None else 0.0


def _timed(values: Sequence[float | None], indices: Sequence[int]) -> list[float]:
    """The times taken of these events (eager ops' graphs are not timed)."""
    return [t for i in indices if i < len(values) and (t := values[i]) is not None]


# PT_XLA_DEBUG's compile causes for graphs not traced lazily step by step.
_COMPILED_BY = {
    "dynamo is compiling a FX graph to HLO": "dynamo",
    "torch_xla.compile": "torch_xla_compile",
}


def _framework_site(frames: tuple[Frame, ...], roots: CodeRoots) -> str | None:
    frame = framework_frame(frames, roots)
    return frame.location if frame is not None else None


def _site(
    event: AnalysisEvent, roots: CodeRoots, entry_site: str | None, backward_line: str | None
) -> tuple[str, str | None]:
    """Why the graph ran and the user's ``file:line`` behind it (a torch.compile
    backward graph, which the autograd engine compiles with no user frame: the
    ``loss.backward()`` line of its step)."""
    user = first_user_frame(event.frames, roots)
    if user is None and backward_line is not None and in_compiled_backward(event.frames):
        return "dynamo", backward_line
    compiled_by = _COMPILED_BY.get(event.cause.strip())
    if is_eager(event):
        return "eager", user.location if user is not None else None
    if compiled_by is None and in_dynamo_bridge(event.frames):
        compiled_by = "dynamo"  # the bridge synced the inputs of a compiled call
    if compiled_by is not None:  # a graph torch.compile or torch_xla.compile built
        return compiled_by, user.location if user is not None else entry_site
    if user is not None:
        trigger = "host_sync" if is_value_read(event) else "user_sync"
        return trigger, user.location
    if any(roots.is_xlacli(frame) for frame in event.frames):
        return "step_end", entry_site
    return "other", None


def _step_records(
    raw: RawRun, compile_steps: list[int | None], execute_steps: list[int | None], warmup: int
) -> StepRecords:
    # One pass over the compiles and executions, not one per step: a long
    # profile has hundreds of steps and graphs. Folded as it goes (report/steps.py).
    compiles_in = Counter(compile_steps)
    ran_in: dict[int | None, list[AnalysisEvent]] = {}
    for execution, step in zip(raw.executions, execute_steps, strict=True):
        ran_in.setdefault(step, []).append(execution)
    phases = script_step_phases(raw.log.steps)
    return StepRecords.fold(
        (
            _step_record(event, ran_in.get(event.step, []), compiles_in, phases)
            for event in raw.log.steps
        ),
        warmup=warmup,  # runs end where the warm-up does: medians of steady steps stay exact
    )


def _step_record(
    event: StepEvent,
    ran: list[AnalysisEvent],
    compiles_in: Counter[int | None],
    phases: dict[int, str],
) -> StepRecord:
    number = event.step or 0  # a step event has its number
    return StepRecord(
        step=number,
        wall_time_s=event.wall_time_s or 0.0,
        compilations=compiles_in[event.step],
        executions=len(ran),
        input_signature=tuple(event.measures.input_signature),
        graph_hashes=tuple(execution.graph_hash or "" for execution in ran),
        value_reads=sum(is_value_read(execution) for execution in ran),
        # The step's own CPU fallbacks (no other metric event has its number).
        fallbacks=sum(
            count for name, count in event.measures.counters.items() if name.startswith("aten::")
        ),
        phase=phases.get(number, LOOP),
    )
