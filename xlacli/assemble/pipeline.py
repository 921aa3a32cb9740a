"""The assembler: a run folder -> its ``RunReport``, as four stages.

1. read (``read.py``): parse the raw artifacts;
2. organise (``organise.py``): steps, graphs and their files in ``graphs/<hash>/``;
3. analyse (``processors.py``): each processor, in the declared order, writes its
   own section; one that raises is recorded in the report's ``problems`` and its
   section left empty, so a bug in one analysis costs one section, not the report;
4. freeze (here): the sections become the frozen report.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Iterable, Sequence
from typing import Any

from xlacli.analysis.recompiles.phases import loop_step_count
from xlacli.assemble.beside import can_run_beside, start_beside
from xlacli.assemble.graph_files import HloCache
from xlacli.assemble.organise import OrganisedRun, organise_run
from xlacli.assemble.processors import (
    PROCESSORS,
    DiffChecked,
    DynamoSection,
    MemorySection,
    Processor,
)
from xlacli.assemble.read import RawRun
from xlacli.parse.frames import CodeRoots, current_code_roots
from xlacli.report.run_report import ErrorRecord, GraphRecord, Problem, RunReport
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.step_events import StepEvent


def build_report(
    raw: RawRun,
    paths: RunPaths,
    request: CaptureRequest,
    model_label: str,
    error: ErrorRecord | None,
    *,
    warmup: int = 2,
    roots: CodeRoots | None = None,
    hlo: HloCache | None = None,
    processors: Sequence[Processor] | None = None,
) -> RunReport:
    """Assemble the report, moving each graph's kept files into ``graphs/<hash>/``.

    ``hlo``: where the graphs' parsed HLO is kept, for a caller that reads it again.
    ``processors``: the analyses, in order (the default is every one of them).
    """
    run = organise_run(
        raw,
        paths,
        request,
        warmup=warmup,
        roots=roots or current_code_roots(),
        hlo=hlo or HloCache(paths.root),
    )
    sections, problems = run_processors(run, PROCESSORS if processors is None else processors)
    return freeze_report(run, sections, problems, model_label, error)


def run_processors(
    run: OrganisedRun, processors: Sequence[Processor], *, beside: bool | None = None
) -> tuple[dict[str, Any], tuple[Problem, ...]]:
    """Every processor's section, in order; a failing one leaves its empty section
    and a ``Problem`` naming it. Each is handed the sections it ``reads``.

    ``beside``: run the processors marked ``beside`` in a second process
    (``beside.py``) while this one runs the rest; None: when the run is large
    enough for it to pay. The sections are the same either way.
    """
    aside = [p for p in processors if p.beside]
    if aside and (_worth_a_second_process(run) if beside is None else beside):
        worker = start_beside(lambda: {p.section: run_one(p, run, {}) for p in aside})
    else:
        worker = None
    results: dict[str, tuple[Any, Problem | None]] = {}
    for processor in processors:
        if worker is None or not processor.beside:
            results[processor.section] = run_one(processor, run, results)
    if worker is not None:
        results.update(worker.result() or {})
        for processor in processors:  # the second process failed: here, after all
            if processor.section not in results:
                results[processor.section] = run_one(processor, run, results)
    sections = {p.section: results[p.section][0] for p in processors}
    problems = tuple(problem for _, problem in (results[p.section] for p in processors) if problem)
    return sections, problems


# All of a run's graphs together, in HLO instructions: from this size the
# processors marked ``beside`` run in a second process. Below it, forking and
# pickling their sections cost more than they save (an 8-layer decoder's run
# of 26k instructions spends ~1 s in them).
BESIDE_FROM_INSTRUCTIONS = 20_000


def _worth_a_second_process(run: OrganisedRun) -> bool:
    size = sum(graph.hlo_instructions or 0 for graph in run.graphs)
    return size >= BESIDE_FROM_INSTRUCTIONS and can_run_beside()


def run_one(
    processor: Processor, run: OrganisedRun, done: dict[str, tuple[Any, Problem | None]]
) -> tuple[Any, Problem | None]:
    """One processor's section (its empty one and the problem, if it raised)."""
    reads = {name: done[name][0] for name in processor.reads if name in done}
    try:
        return processor.run(run, reads), None
    except Exception as exc:  # a bug in one analysis must not lose the report
        return processor.empty(), _problem(processor, exc)


def _problem(processor: Processor, exc: Exception) -> Problem:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return Problem(
        processor=processor.section,
        exception=type(exc).__name__,
        message=str(exc),
        where=where,
    )


def freeze_report(
    run: OrganisedRun,
    sections: dict[str, Any],
    problems: tuple[Problem, ...],
    model_label: str,
    error: ErrorRecord | None,
) -> RunReport:
    """The frozen report: the organised run with every processor's section."""
    raw, request = run.raw, run.request
    memory: MemorySection = sections.get("memory") or MemorySection()
    checked: DiffChecked = sections.get("diff_checked") or DiffChecked()
    dynamo: DynamoSection = sections.get("dynamo") or DynamoSection()
    loop_steps = loop_step_count([record.phase for record in run.step_records])
    return RunReport(
        model=model_label,
        device=raw.log.start.device if raw.log.start else "unknown",
        # What --steps N counts: the loop's iterations, not a script's setup syncs.
        steps=loop_steps,
        steps_requested=request.planned_steps(loop_steps),
        train=request.train,
        run_dir=str(run.paths.root),
        compilations=len(raw.compiles),
        executions=len(raw.executions),
        total_compile_time_s=sum(t for t in raw.compile_times_s if t is not None),
        total_execute_time_s=sum(t for t in raw.execute_times_s if t is not None),
        graphs=tuple(_graph_with_sections(g, memory, sections.get("spmd", {})) for g in run.graphs),
        step_records=run.step_records,
        counters=raw.counters,
        versions=dict(raw.log.start.versions if raw.log.start else {}),
        error=error,
        warmup=run.warmup,
        events=checked.events if checked.events else tuple(sections.get("events", ())),
        served_graphs=tuple(sections.get("served_graphs", ())),
        unrolled_loops=tuple(sections.get("unrolled_loops", ())),
        explanation_checks=checked.checks,
        fallback_ops=tuple(sections.get("fallback_ops", ())),
        memory=memory.run,
        mode=request.mode,
        dynamo=dynamo.record,
        problems=problems,
        command="profile" if request.profile_logdir else request.command,
        compile_cost=sections.get("compile_cost"),
        scan_advice=tuple(sections.get("scan_advice", ())),
        bucket_advice=tuple(sections.get("bucket_advice", ())),
        value_read_costs=tuple(sections.get("value_read_costs", ())),
        trained=steps_trained(raw.log.steps),
    )


def _graph_with_sections(
    graph: GraphRecord, memory: MemorySection, spmd: dict[str, Any]
) -> GraphRecord:
    facts = memory.graphs.get(graph.hash)
    return dataclasses.replace(
        graph,
        memory=facts.memory if facts else None,
        precision=facts.precision if facts else None,
        checkpoint=facts.checkpoint if facts else None,
        spmd=spmd.get(graph.hash),
    )


def steps_trained(steps: Iterable[StepEvent]) -> bool:
    """A step ran a backward pass or an optimizer step, whoever called it (the step
    event's counts of what trains: child/backward_calls.py)."""
    return any(
        m.backward_calls or m.optimizer_steps or m.backward_sites
        for m in (step.measures for step in steps)
    )
