"""The flow of ``xlacli profile``: warm up, trace the steps, summarize, view."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from rich.markup import escape

from xlacli import defaults
from xlacli.analysis.dynamo import dynamo_window_note
from xlacli.analysis.host_split import host_split, tracing_note
from xlacli.analysis.profile_summary import (
    CompiledModule,
    batch_size,
    breakdown,
    graph_times,
    op_times_from_hlo_stats,
    op_times_from_trace,
    profiled_steps,
    step_times,
    top_ops,
)
from xlacli.assemble.collect import execution_records
from xlacli.assemble.graph_files import HloCache
from xlacli.capture.discover import ModelTarget
from xlacli.config import load_config, project_runs_dir
from xlacli.errors import CaptureError, UsageError
from xlacli.flows.session import CaptureResult, capture, configured_target
from xlacli.flows.tensorboard import (
    DEFAULT_PORT,
    check_port_free,
    check_tensorboard_installed,
    launch,
    shell_command,
)
from xlacli.parse.trace_events import TraceEvent, read_trace_file
from xlacli.parse.xprof_tools import table_rows, tool_data, xprof_available
from xlacli.paths import display_path
from xlacli.render.console import print_message
from xlacli.render.profile import render_profile
from xlacli.report.profile import ProfileSummary, save_summary
from xlacli.run.events import STEP_TRACE_NAME, ChildLog
from xlacli.words import counted

T = TypeVar("T")
DEFAULT_STEPS = defaults.PROFILE.steps
DEFAULT_WARMUP = defaults.PROFILE.warmup
# A few hundred MB of trace at ~0.6 MB a step (examples/transformer.py).
DEFAULT_MAX_TRACE_STEPS = 500


@dataclass(frozen=True)
class ProfileRequest:
    """The options of ``xlacli profile``."""

    model: str | None
    steps: int | None
    warmup: int | None
    train: bool
    optimizer: str
    logdir: Path | None
    name: str | None
    tensorboard: bool
    port: int
    out: Path | None
    force: bool
    output_format: str
    devices: int | None = None  # SPMD devices; None: [tool.xlacli] devices
    max_trace_steps: int = 0  # 0: DEFAULT_MAX_TRACE_STEPS
    mode: str = "lazy"  # "dynamo": the step under torch.compile; "both": compared
    html: bool = False
    module: str | None = None  # -m MODULE
    script_args: tuple[str, ...] = ()  # the script's arguments, after --


def run_profile(request: ProfileRequest) -> int:
    """Profile the model; raises ``XlacliError`` after the summary when the run failed."""
    config = load_config()
    target = configured_target(
        request.model, request.module, request.script_args, config, "profile"
    )
    if request.tensorboard:
        check_tensorboard_installed()
        check_port_free(request.port)
    if request.logdir is not None:
        _prepare_logdir(request.logdir, request.name, request.force)
    if request.mode == "both":
        from xlacli.flows.compare import compare_profile
        from xlacli.flows.modes import check_mode

        check_mode(target, "dynamo")  # before the lazy run, not after it

        return compare_profile(target, request)
    result, summary = capture_profile(target, request)
    render_profile(summary, request.output_format)
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        announce_run_html(result.paths.root, result.report)
    if result.error is not None:
        raise result.error
    if summary.trace_files:
        _view(summary, request)
    return 0


def capture_profile(
    target: ModelTarget, request: ProfileRequest, mode: str | None = None, out: Path | None = None
) -> tuple[CaptureResult, ProfileSummary]:
    """Capture and trace the steps in one mode (``mode`` given: one of a
    comparison, its session named after it); the summary is saved in the run folder."""
    compared = mode is not None
    mode = mode or request.mode
    config = load_config()
    result = capture(
        target,
        mode=mode,
        # Only the model comes from [tool.xlacli]: its steps and warm-up are the
        # check's, a few steps, not a profile's.
        steps=request.steps or DEFAULT_STEPS,
        warmup=DEFAULT_WARMUP if request.warmup is None else request.warmup,
        explain_warmup=DEFAULT_WARMUP if request.warmup is None else request.warmup,
        train=request.train,
        optimizer=request.optimizer,
        out=out or request.out,
        force=request.force,
        ir_dump=False,
        profile=True,
        profile_logdir=request.logdir,
        profile_session=f"{request.name}-{mode}" if request.name and compared else request.name,
        label=f"Profiling {target.module or target.path.name}" + (f" ({mode})" if compared else ""),
        devices=request.devices if request.devices is not None else config.devices,
        runs_dir=project_runs_dir(config),
        max_trace_steps=_trace_limit(request),
    )
    summary = summarize(result)
    save_summary(summary, result.paths.root)
    return result, summary


def _trace_limit(request: ProfileRequest) -> int:
    """How many steps to trace: the profiler holds every traced event in memory
    until the trace stops (~0.6 MB a step for examples/transformer.py), so a
    long run traces its first steps and runs the rest untraced."""
    limit = request.max_trace_steps or DEFAULT_MAX_TRACE_STEPS
    steps = request.steps or DEFAULT_STEPS
    if steps > limit:
        print_message(
            f"[yellow]warning:[/] tracing the first {limit} of {steps} steps, to bound the "
            "trace's memory; the others run untraced (--max-trace-steps to change it)"
        )
    return limit


def _prepare_logdir(logdir: Path, name: str | None, force: bool) -> None:
    try:
        logdir.mkdir(parents=True, exist_ok=True)
        probe = logdir / ".xlacli-write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise CaptureError(
            f"the logdir {logdir} is not writable: {error.strerror}",
            hint="pass a --logdir you can write to",
        ) from None
    session = logdir / "plugins" / "profile" / name if name else None
    if session is not None and session.exists():
        if not force:
            raise UsageError(
                f"a profile session named {name!r} already exists in {logdir}",
                hint="pass another --name, or --force to replace it",
            )
        shutil.rmtree(session)


def summarize(result: CaptureResult) -> ProfileSummary:
    """The summary of the profiled steps that completed."""
    raw, report = result.raw, result.report
    trace = raw.log.trace or {}
    files = tuple(trace.get("files", ()))
    notes: list[str] = []
    events = _trace_events(files, notes)
    completed = {e["step"] for e in raw.log.steps if e.get("traced")}
    steps = [s for s in profiled_steps(events, STEP_TRACE_NAME) if s.step in completed]
    op_times, op_source = _op_times(files, events, result.paths.root, notes)
    hlo = result.hlo or HloCache(result.paths.root)
    executions = _window(execution_records(raw), raw.log, "executions")
    executed = {r.graph_hash for r in executions}
    modules = [
        CompiledModule(graph.hash, module, graph.hash in executed)
        for graph in report.graphs
        if (module := hlo.module(graph.files.get("hlo_after"))) is not None
    ]
    sites = {graph.hash: graph.site for graph in report.graphs}
    breakdown_s = breakdown(events, steps)
    window_compiles = len(_window(list(report.events), raw.log, "compilations"))
    if window_compiles:
        notes.append(
            f"{counted(window_compiles, 'compile')} happened inside the "
            "profiled window: the warm-up was too short or the model recompiles "
            "(xlacli compile explains each one)"
        )
    dynamo_note = dynamo_window_note(report.dynamo, completed)  # torch.compile retraces
    if dynamo_note:
        notes.append(dynamo_note)
    split = host_split([e for e in raw.log.steps if e.get("step") in completed], breakdown_s)
    times = step_times(steps)
    first_traced = next((e for e in raw.log.steps if e.get("traced")), {})
    batch = batch_size(first_traced.get("input_signature", ()))
    session_dir = trace.get("session_dir") or ""
    return ProfileSummary(
        model=report.model,
        device=report.device,
        steps=len(steps),
        warmup=_warmup_steps(raw.log),
        step_times_s=tuple(step.end_s - step.start_s for step in steps),
        step_time_s=times,
        batch_size=batch,
        samples_per_s=batch / times.p50 if batch and times and times.p50 > 0 else None,
        breakdown=breakdown_s,
        top_ops=top_ops(op_times, modules),
        graphs=graph_times(((r.graph_hash, r.time_s) for r in executions), sites.get),
        window_compiles=window_compiles,
        trace_files=files,
        logdir=str(Path(session_dir).parents[2]) if session_dir else "",
        session=Path(session_dir).name if session_dir else "",
        run_dir=report.run_dir,
        source_of_op_times=op_source,
        notes=tuple(notes),
        interrupted=report.error is not None and report.error.kind == "interrupted",
        host_split=split,
        tracing_advice=tracing_note(split, report.mode, display_path(report.model)),
        mode=report.mode,
    )


def _warmup_steps(log: ChildLog) -> int:
    """Steps run before the first traced one (steps after a capped trace are not warm-up)."""
    traced = [e.get("step", 0) for e in log.steps if e.get("traced")]
    if traced:
        return min(traced)
    return sum(1 for e in log.steps if not e.get("traced"))


def _window(items: list[T], log: ChildLog, counter: str) -> list[T]:
    """The items (compiles or executions, in run order) inside the profiled window.

    The child read the counters when the window opened and closed, with the
    device idle both times; a window cut short has no closing count.
    """
    first = (log.trace_start or {}).get(counter)
    if first is None:
        return []
    last = (log.trace or {}).get(counter)
    return items[first:last]


def _trace_events(files: tuple[str, ...], notes: list[str]) -> list[TraceEvent]:
    trace_json = next((Path(f) for f in files if f.endswith(".trace.json.gz")), None)
    if trace_json is None:
        notes.append("the profiler wrote no trace events")
        return []
    return read_trace_file(trace_json)


def _op_times(
    files: tuple[str, ...], events: list[TraceEvent], run_dir: Path, notes: list[str]
) -> tuple[list[tuple[str, str, float, int]], str]:
    """HLO op times from the plugin's hlo_stats (device ops, TPU), else the trace."""
    xplane = next((Path(f) for f in files if f.endswith(".xplane.pb")), None)
    if xplane is not None and not xprof_available():
        notes.append(
            "tensorboard-plugin-profile is not installed: op times come from the trace events "
            "(pip install 'xlacli[profile]')"
        )
    elif xplane is not None:
        rows = table_rows(tool_data(xplane, "hlo_stats", run_dir / "xprof.log"))
        if rows:
            return op_times_from_hlo_stats(rows), "xprof hlo_stats"
    return op_times_from_trace(events), "trace events"


def _view(summary: ProfileSummary, request: ProfileRequest) -> None:
    logdir = Path(summary.logdir)
    if not request.tensorboard:
        # The command alone on its line (after the label), never cropped.
        command = shell_command(Path(display_path(logdir)), request.port)
        print_message(f"View the trace: [bold]{escape(command)}[/]")
        print_message(f"  then open http://localhost:{request.port}/#profile")
        return
    process = launch(logdir, request.port, Path(summary.run_dir) / "tensorboard.log")
    print_message(
        f"TensorBoard is serving {display_path(logdir)} at "
        f"[bold]http://localhost:{request.port}/#profile[/]  (Ctrl-C to stop)"
    )
    try:
        process.wait()
    except KeyboardInterrupt:
        process.terminate()
        process.wait()


__all__ = ["DEFAULT_PORT", "ProfileRequest", "run_profile", "summarize"]
