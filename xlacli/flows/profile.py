"""The flow of ``xlacli profile``: warm up, trace the steps, summarize, view."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from rich.markup import escape

import xlacli.defaults as defaults
from xlacli.assemble.profile import summarize_profile
from xlacli.capture.discover import ModelTarget
from xlacli.capture.ranks import rank_folder
from xlacli.config import load_config, project_runs_dir
from xlacli.errors import CaptureError, UsageError
from xlacli.flows.ranks import finish_rank, launched_rank, profile_finished
from xlacli.flows.session import CaptureResult, capture, configured_target
from xlacli.flows.spawned import checked_reports, reported_folders
from xlacli.flows.tensorboard import (
    DEFAULT_PORT,
    check_port_free,
    check_tensorboard_installed,
    launch,
    shell_command,
)
from xlacli.paths import display_path
from xlacli.render.console import print_message
from xlacli.render.profile import render_profile
from xlacli.render.ranks import render_ranks
from xlacli.report.profile import ProfileSummary, load_summary, save_summary

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
    hang_timeout: float | None = None  # --hang-timeout: stop a run where no rank progresses
    ranks_timeout: float = 300.0  # under a launcher: rank 0's wait for the other ranks


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
        from xlacli.flows.modes import check_mode

        check_mode(target, "dynamo")  # before the lazy run, not after it

        return compare_profile(target, request)
    result, summary = capture_profile(target, request)
    place = launched_rank()
    # Under a launcher, rank 0 prints (as JSON: only the merged report); the other
    # ranks' summaries are in their folders. So for the ranks a script starts itself.
    merged_only = request.output_format == "json" and (
        place is not None or result.ranks is not None
    )
    if (place is None or place.is_merger) and not merged_only:
        render_profile(summary, request.output_format)
    if result.ranks is not None:  # the script's own ranks side by side: the stragglers
        ranks_format = "json" if request.output_format == "json" else "text"
        render_ranks(result.ranks.merged, result.paths.root, ranks_format)
    if place is not None:  # rank 0 adds the ranks side by side: the stragglers
        finish_rank(
            place,
            result.paths.root.parent,
            failed=result.error is not None,
            output_format="json" if request.output_format == "json" else "text",
            timeout_s=request.ranks_timeout,
            hang_timeout_s=request.hang_timeout,
            done=profile_finished,
            compare_steps=False,
        )
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        for folder, report in reported_folders(result):
            announce_run_html(folder, report)
    if result.error is not None:
        raise result.error
    checked_reports(result)  # a rank the script started failed: its error
    if summary.trace_files and (place is None or place.is_merger):
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
        hang_timeout=request.hang_timeout,
    )
    if result.ranks is not None and result.ranks.reports:  # the script's own ranks: rank 0's
        rank_summary = load_summary(rank_folder(result.paths.root, min(result.ranks.reports)))
        if rank_summary is not None:
            return result, rank_summary
    summary = summarize_profile(result.raw, result.report, result.hlo)
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


__all__ = ["DEFAULT_PORT", "ProfileRequest", "run_profile"]


def compare_profile(target: ModelTarget, request: ProfileRequest) -> int:
    """``xlacli profile MODEL --mode both``: profile each mode, print the table.

    The median step time is the profiler's (the traced steps); the other
    figures come from each run's report.

    Raises:
        XlacliError: the first mode's error, after the table is printed.
    """
    from xlacli.analysis.mode_figures import figures
    from xlacli.flows.compare import mode_out, raise_first_error, run_modes
    from xlacli.render.compare import render_comparison
    from xlacli.report.profile import summary_to_dict

    runs = run_modes(
        lambda mode: capture_profile(target, request, mode, mode_out(request.out, mode))
    )
    reports = {mode: result.report for mode, (result, _) in runs.items()}
    compared = {
        mode: figures(
            result.report,
            summary.step_time_s.p50 if summary.step_time_s else None,
            summary.host_split,
        )
        for mode, (result, summary) in runs.items()
    }
    profiles = {mode: summary_to_dict(summary) for mode, (_, summary) in runs.items()}
    render_comparison(
        reports, compared, request.output_format, command="profile", extra={"profiles": profiles}
    )
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        for result, _ in runs.values():
            announce_run_html(result.paths.root, result.report)
    raise_first_error(result for result, _ in runs.values())
    return 0
