"""The run report: frozen dataclasses, saved as versioned JSON with sorted keys.

A run folder holds ``report.json``; every renderer and analysis works from a
``RunReport``, so a saved run re-renders without re-running the model.
Loading reads keys with defaults, so reports saved by older versions of the
same schema keep loading.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlacli.errors import UsageError
from xlacli.report.advice import (
    BucketAdvice,
    CompileCost,
    ScanAdvice,
    ValueReadCost,
    bucket_advice_from_dict,
    compile_cost_from_dict,
    scan_advice_from_dict,
    value_read_costs_from_dict,
)
from xlacli.report.memory import (
    CheckpointFacts,
    GraphMemory,
    GraphPrecision,
    RunMemory,
    checkpoint_from_dict,
    graph_memory_from_dict,
    graph_precision_from_dict,
    run_memory_from_dict,
)
from xlacli.report.sharding import GraphSpmd, graph_spmd_from_dict
from xlacli.report.steps import (
    StepCycle,
    StepRecords,
    StepRun,
    segment_from_dict,
    segment_to_dict,
    step_record_from_dict,
)

# StepRecord is re-exported: readers import it from here.
from xlacli.report.steps import StepRecord as StepRecord

# 2: steps kept as runs of equal steps (``step_runs``), memory facts folded alike;
# version 1 reports (a record per step) still load.
SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)
REPORT_FILE = "report.json"
NOT_A_RUN_HINT = "xlacli report takes a run folder, as compile prints it (`xlacli runs` lists them)"


@dataclass(frozen=True)
class GraphRecord:
    """One distinct graph, keyed by torch_xla's graph hash."""

    hash: str
    site: str | None  # the user's ``/abs/file.py:line`` behind the graph (see README)
    trigger: str  # "step_end" (xlacli's sync), "user_sync", "host_sync" (a value read),
    # "dynamo" (torch.compile's FX graph), "torch_xla_compile"
    frames: tuple[str, ...]  # the Python frames torch_xla recorded, innermost first
    ir_nodes: int | None  # None: no IR dump (a profile)
    hlo_instructions: int | None
    optimized_hlo_instructions: int | None
    fusions: int | None
    input_bytes: int | None
    output_bytes: int | None
    temp_bytes: int | None
    compilations: int
    compile_time_s: float
    executions: int
    execute_time_s: float | None  # median over executions after the first
    total_execute_time_s: float
    first_step: int | None
    files: Mapping[str, str] = field(default_factory=dict)  # relative to the run folder
    # Memory, precision mix and checkpointing (see xlacli.report.memory).
    memory: GraphMemory | None = None
    precision: GraphPrecision | None = None
    checkpoint: CheckpointFacts | None = None
    spmd: GraphSpmd | None = None  # SPMD: mesh, shardings, collectives (sharding_report.py)
    # When the user's line is one call into a framework (trainer.train()): the
    # framework's own line that is the site (parse/frames.py framework_frame).
    framework_site: str | None = None


@dataclass(frozen=True)
class CompileCause:
    """Why a graph was compiled (see ``xlacli.analysis.recompiles.explain``)."""

    category: str  # first_compile, input_shape, ..., host_sync, unknown
    location: str | None  # the user's file:line
    library_location: str | None  # the library frame the change came through, if any
    detail: str  # before -> after
    hint: str | None = None
    # Other defensible explanations of the same compile, most specific first.
    also: tuple[CompileCause, ...] = ()


@dataclass(frozen=True)
class CompileEvent:
    """One compile of the run."""

    step: int | None
    graph_hash: str
    compile_time_s: float
    # A site that finished its own warm-up compiled again: a recompile the
    # user must see (per-site steady state, analysis/recompiles/phases.py).
    steady_state: bool
    cause: CompileCause
    compared_with: str | None = None  # the earlier graph it was compared with
    phase: str = (
        "loop"  # setup, loop, new_phase, periodic or after_loop (analysis/recompiles/phases.py)
    )


@dataclass(frozen=True)
class ServedGraph:
    """A graph the run executed without compiling it: a cache served it (torch_xla's
    in-process cache, warmed by earlier code in the same process such as an earlier
    test, or its persistent cache). A budget counts what the code does, so a warm
    site running such a graph is a steady-state graph change like a recompile."""

    step: int | None
    graph_hash: str
    site: str | None  # the user's file:line that ran it
    phase: str  # as a compile's (analysis/recompiles/phases.py)
    steady_state: bool  # a warm site ran a graph it had not run before
    detail: str  # what differed from the site's earlier steps, when the inputs say


@dataclass(frozen=True)
class ExplanationCheck:
    """A recompile whose explanation the structural diff of its two graphs
    contradicted (analysis/recompiles/diff_check.py): the diff's story was reported."""

    graph_hash: str
    compared_with: str
    explained: str  # the explainer's category
    diff: str  # the category the diff supports, now the cause's
    diff_story: str  # what the diff says changed


@dataclass(frozen=True)
class UnrolledLoop:
    """A loop of the user's with no sync inside, traced into one graph once per
    iteration (analysis/recompiles/unrolled.py): the graph grows with the trip count."""

    graph_hash: str
    loop: str  # the loop's ``for``/``while`` line
    body: str  # the line whose ops repeat
    iterations: int  # how many times they repeat in the graph
    hlo_instructions: int | None  # the graph's size


@dataclass(frozen=True)
class FallbackOp:
    """An op torch_xla ran on the CPU (an ``aten::*`` counter)."""

    op: str
    count: int
    location: str | None  # the user's line whose value read it needed, if known
    library_location: str | None = None  # the library line it ran in (xm.mesh_reduce...)


@dataclass(frozen=True)
class ErrorRecord:
    """Why the run stopped early."""

    kind: str  # "model", "usage", "capture", "signal", "interrupted"
    message: str
    exit_code: int
    details: str | None = None


@dataclass(frozen=True)
class Problem:
    """An analysis that raised while the report was built: its section is empty,
    the rest of the report stands. A bug in xlacli, to be reported."""

    processor: str  # the section it writes: "events", "memory", "spmd"...
    exception: str  # the exception's type, e.g. "ValueError"
    message: str
    where: str = ""  # xlacli's file:line that raised


@dataclass(frozen=True)
class GraphBreakRecord:
    """Where Dynamo broke the FX graph, and why (``torch.compile``)."""

    location: str  # the user's file:line
    reason: str  # Dynamo's reason, first line: "Unsupported Tensor.item() call ..."
    count: int  # frame compiles that broke there
    # The library's file:line where Dynamo broke, when the break is inside a
    # library the user's ``location`` called (None: it broke at ``location``).
    library_location: str | None = None

    @property
    def break_location(self) -> str:
        """Where Dynamo itself broke (and resumes): the library's line or the user's."""
        return self.library_location or self.location


@dataclass(frozen=True)
class DynamoFrameRecord:
    """One Dynamo frame compile: a Python frame traced into an FX graph."""

    compile_id: str  # Dynamo's "frame/compile", e.g. "0/1" (the frame's 2nd compile)
    function: str
    location: str  # the frame's file:first line
    step: int | None
    fx_ops: int  # ops in its FX graph (0: no graph)
    guard_failure: str | None  # the guard that failed, when this is a recompile
    compile_time_s: float  # Dynamo's own time (tracing, AOT, backend)
    graph_hashes: tuple[str, ...] = ()  # the XLA graphs its FX graph lowered to
    guard_read: str | None = None  # the user's file:line that read the failed guard's value


@dataclass(frozen=True)
class DynamoRecord:
    """What Dynamo did in the run (``torch.compile(backend="openxla")``)."""

    source: str  # "xlacli" (--mode dynamo) or "user" (the model calls torch.compile)
    frames: tuple[DynamoFrameRecord, ...]
    graph_breaks: tuple[GraphBreakRecord, ...]
    fx_graphs: int
    recompiles: int  # frame compiles after a guard failure
    extractions: int  # torch_xla's FX-graph extractions (DynamoExtractCompiledGraph)
    counters: Mapping[str, Mapping[str, int]] = field(default_factory=dict)  # Dynamo's own


@dataclass(frozen=True)
class RunReport:
    """Everything ``xlacli compile`` learned from one run."""

    model: str
    device: str
    steps: int  # steps completed
    steps_requested: int
    train: bool  # --train: xlacli's own training step (ignored when the file defines step())
    run_dir: str
    compilations: int
    executions: int
    total_compile_time_s: float
    total_execute_time_s: float
    graphs: tuple[GraphRecord, ...]
    # Read a step at a time; kept as runs of equal steps (report/steps.py).
    step_records: StepRecords = field(default_factory=StepRecords)
    counters: Mapping[str, int] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)
    error: ErrorRecord | None = None
    warmup: int = 2
    events: tuple[CompileEvent, ...] = ()
    # Graphs executed but never compiled in this run (a cache served them).
    served_graphs: tuple[ServedGraph, ...] = ()
    # Loops with no sync inside, unrolled into one graph (analysis/recompiles/unrolled.py).
    unrolled_loops: tuple[UnrolledLoop, ...] = ()
    # Explanations the structural diff contradicted, and corrected (recompiles/diff_check.py).
    explanation_checks: tuple[ExplanationCheck, ...] = ()
    fallback_ops: tuple[FallbackOp, ...] = ()
    schema_version: int = SCHEMA_VERSION
    memory: RunMemory | None = None  # step peaks, device memory, autocast per step
    # The options that reproduce the run's mode (``--train --optimizer adamw``),
    # so "Next:" commands run the same thing.
    options: tuple[str, ...] = ()
    mode: str = "lazy"  # "lazy", or "dynamo" (xlacli ran the step under torch.compile)
    dynamo: DynamoRecord | None = None  # set when Dynamo ran, whoever called it
    # Analyses that raised: their sections are missing from this report.
    problems: tuple[Problem, ...] = ()
    command: str = "compile"  # the command that made the run: compile or profile
    # The launcher of a script that started one process itself (xmp.spawn on one
    # device): its report is this ordinary one, the launcher noted.
    launcher: str | None = None
    # Advice (advice_report.py): where compile cost comes from, and what would cut it.
    compile_cost: CompileCost | None = None
    scan_advice: tuple[ScanAdvice, ...] = ()
    bucket_advice: tuple[BucketAdvice, ...] = ()
    value_read_costs: tuple[ValueReadCost, ...] = ()
    # What the steps did, whoever drove them (xlacli's --train, a model file's own
    # step(), a script's loop): a backward pass or an optimizer step ran.
    trained: bool = False

    def __post_init__(self) -> None:
        # Callers may give a record per step (tests, older code): kept folded.
        if not isinstance(self.step_records, StepRecords):
            steps = StepRecords.fold(self.step_records, warmup=self.warmup)
            object.__setattr__(self, "step_records", steps)

    @property
    def step_runs(self) -> tuple[StepRun | StepCycle, ...]:
        """The steps as runs of equal steps and cycles of runs, as ``report.json`` keeps them."""
        return self.step_records.segments

    @property
    def steady_state_compiles(self) -> int:
        """Compiles after the warm-up steps."""
        return sum(1 for event in self.events if event.steady_state)

    @property
    def steady_state_graph_changes(self) -> int:
        """Warm sites that ran a graph they had not run before, compiled or served
        from a cache: what a budget counts (a cache must not hide a change)."""
        served = sum(1 for graph in self.served_graphs if graph.steady_state)
        return self.steady_state_compiles + served

    @property
    def executions_per_step(self) -> tuple[int, ...]:
        """Graph executions in each step (more than 1: the step was cut by a value read)."""
        return tuple(record.executions for record in self.step_records)

    @property
    def ok(self) -> bool:
        return self.error is None


def report_to_dict(report: RunReport) -> dict[str, Any]:
    """The JSON form of a report (plain dicts and lists), derived counts included."""
    data = dataclasses.asdict(dataclasses.replace(report, step_records=StepRecords()))
    del data["step_records"]  # a view: what is kept is its runs
    data["step_runs"] = [segment_to_dict(segment) for segment in report.step_runs]
    data["steady_state_compiles"] = report.steady_state_compiles
    data["steady_state_graph_changes"] = report.steady_state_graph_changes
    return data


def dump_report(report: RunReport) -> str:
    """Serialize a report as JSON with sorted keys.

    The same report object is saved, then printed with ``--format json``: its
    text is kept for the second call (Python's indenting encoder is the pure
    one, ~1 s for a 10,000-step run). A frozen report never changes, so its
    identity is its content.
    """
    cached = _LAST_DUMP.get("report")
    if cached is not None and cached[0] is report:
        return cached[1]
    text = json.dumps(report_to_dict(report), indent=2, sort_keys=True) + "\n"
    _LAST_DUMP["report"] = (report, text)
    return text


_LAST_DUMP: dict[str, tuple[RunReport, str]] = {}


def save_report(report: RunReport, run_dir: Path) -> Path:
    """Write ``report.json`` into the run folder and return its path."""
    path = run_dir / REPORT_FILE
    path.write_text(dump_report(report), encoding="utf-8")
    return path


def load_report(run_dir: Path) -> RunReport:
    """Load ``report.json`` from a run folder (or the file itself).

    Raises:
        UsageError: the folder holds no report, or a report of another schema.
    """
    path = run_dir / REPORT_FILE if run_dir.is_dir() else run_dir
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        inside = _run_folder_above(run_dir)
        raise UsageError(
            f"{run_dir} is not an xlacli run folder (no {REPORT_FILE})"
            + (f"; it is inside the run folder {inside}" if inside else ""),
            hint=f"xlacli report {inside}"
            if inside
            else "run `xlacli compile MODEL.py` first; it prints its run folder",
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        inside = _run_folder_above(run_dir)
        raise UsageError(
            f"{run_dir} is not an xlacli run folder or report.json (it is not JSON)"
            + (f"; it is inside the run folder {inside}" if inside else ""),
            hint=f"xlacli report {inside}" if inside else NOT_A_RUN_HINT,
        ) from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None
    report = report_from_dict(data, source=str(path))
    # A run folder may have been moved or copied since: it is where it is now.
    return dataclasses.replace(report, run_dir=str(path.parent.resolve()))


def _run_folder_above(path: Path) -> Path | None:
    """The run folder a path lies inside (``RUN/graphs/HASH``), if any."""
    for parent in list(path.parents)[:3]:
        if (parent / REPORT_FILE).is_file():
            return parent
    return None


def report_from_dict(data: Any, *, source: str = "report") -> RunReport:
    """Rebuild a report from its JSON form, tolerating missing optional keys."""
    if not isinstance(data, dict) or "graphs" not in data:
        raise UsageError(
            f"{source} is not an xlacli run report (JSON of another kind)",
            hint=NOT_A_RUN_HINT,
        )
    version = data.get("schema_version")
    if version not in READABLE_VERSIONS:
        raise UsageError(
            f"{source} has report schema version {version}; this xlacli reads"
            f" {' and '.join(map(str, READABLE_VERSIONS))}"
        )
    error = data.get("error")
    return RunReport(
        model=data.get("model", ""),
        device=data.get("device", ""),
        steps=data.get("steps", 0),
        steps_requested=data.get("steps_requested") or data.get("steps", 0),
        train=data.get("train", False),
        trained=bool(data.get("trained", data.get("train", False))),
        run_dir=data.get("run_dir", ""),
        compilations=data.get("compilations", 0),
        executions=data.get("executions", 0),
        total_compile_time_s=data.get("total_compile_time_s", 0.0),
        total_execute_time_s=data.get("total_execute_time_s", 0.0),
        graphs=tuple(_graph_from_dict(g) for g in data.get("graphs", [])),
        step_records=_steps_from_dict(data),
        counters=dict(data.get("counters", {})),
        versions=dict(data.get("versions", {})),
        error=ErrorRecord(**error) if error else None,
        warmup=data.get("warmup", 2),
        events=tuple(_event_from_dict(e) for e in data.get("events", [])),
        served_graphs=tuple(ServedGraph(**g) for g in data.get("served_graphs", [])),
        unrolled_loops=tuple(UnrolledLoop(**u) for u in data.get("unrolled_loops", [])),
        explanation_checks=tuple(ExplanationCheck(**c) for c in data.get("explanation_checks", [])),
        fallback_ops=tuple(FallbackOp(**f) for f in data.get("fallback_ops", [])),
        memory=run_memory_from_dict(data.get("memory")),
        options=tuple(data.get("options", ())),
        mode=data.get("mode", "lazy"),
        dynamo=_dynamo_from_dict(data.get("dynamo")),
        problems=tuple(Problem(**p) for p in data.get("problems", ())),
        command=data.get("command", "compile"),
        launcher=data.get("launcher"),
        compile_cost=compile_cost_from_dict(data.get("compile_cost")),
        scan_advice=scan_advice_from_dict(data.get("scan_advice")),
        bucket_advice=bucket_advice_from_dict(data.get("bucket_advice")),
        value_read_costs=value_read_costs_from_dict(data.get("value_read_costs")),
    )


def _dynamo_from_dict(data: dict[str, Any] | None) -> DynamoRecord | None:
    if not data:
        return None
    return DynamoRecord(
        source=data.get("source", "user"),
        frames=tuple(
            DynamoFrameRecord(**{**f, "graph_hashes": tuple(f.get("graph_hashes", ()))})
            for f in data.get("frames", [])
        ),
        graph_breaks=tuple(GraphBreakRecord(**b) for b in data.get("graph_breaks", [])),
        fx_graphs=data.get("fx_graphs", 0),
        recompiles=data.get("recompiles", 0),
        extractions=data.get("extractions", 0),
        counters={k: dict(v) for k, v in data.get("counters", {}).items()},
    )


def _event_from_dict(data: dict[str, Any]) -> CompileEvent:
    return CompileEvent(
        step=data.get("step"),
        graph_hash=data["graph_hash"],
        compile_time_s=data.get("compile_time_s", 0.0),
        steady_state=data.get("steady_state", False),
        cause=_cause_from_dict(data["cause"]),
        compared_with=data.get("compared_with"),
        phase=data.get("phase", "loop"),
    )


def _cause_from_dict(data: dict[str, Any]) -> CompileCause:
    return CompileCause(
        category=data.get("category", "unknown"),
        location=data.get("location"),
        library_location=data.get("library_location"),
        detail=data.get("detail", ""),
        hint=data.get("hint"),
        also=tuple(_cause_from_dict(other) for other in data.get("also", ())),
    )


def _graph_from_dict(data: dict[str, Any]) -> GraphRecord:
    return GraphRecord(
        hash=data["hash"],
        site=data.get("site"),
        trigger=data.get("trigger", "step_end"),
        frames=tuple(data.get("frames", ())),
        ir_nodes=data.get("ir_nodes"),
        hlo_instructions=data.get("hlo_instructions"),
        optimized_hlo_instructions=data.get("optimized_hlo_instructions"),
        fusions=data.get("fusions"),
        input_bytes=data.get("input_bytes"),
        output_bytes=data.get("output_bytes"),
        temp_bytes=data.get("temp_bytes"),
        compilations=data.get("compilations", 0),
        compile_time_s=data.get("compile_time_s", 0.0),
        executions=data.get("executions", 0),
        execute_time_s=data.get("execute_time_s"),
        total_execute_time_s=data.get("total_execute_time_s", 0.0),
        first_step=data.get("first_step"),
        files=dict(data.get("files", {})),
        memory=graph_memory_from_dict(data.get("memory")),
        precision=graph_precision_from_dict(data.get("precision")),
        checkpoint=checkpoint_from_dict(data.get("checkpoint")),
        spmd=graph_spmd_from_dict(data.get("spmd")),
        framework_site=data.get("framework_site"),
    )


def _steps_from_dict(data: dict[str, Any]) -> StepRecords:
    if "step_runs" in data:
        return StepRecords(segment_from_dict(segment) for segment in data["step_runs"])
    return StepRecords.fold(
        (step_record_from_dict(s) for s in data.get("step_records", ())),
        warmup=data.get("warmup", 2),
    )
