"""``xlacli profile MODEL --steps 50``: TensorBoard traces and a headless summary."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

import xlacli.defaults as defaults
from xlacli.cli import options

if TYPE_CHECKING:
    from xlacli.api import ProfileResult
    from xlacli.report.profile import ProfileSummary


def profile_command(
    ctx: typer.Context,
    model: options.Model = None,
    module: options.Module = None,
    steps: Annotated[
        int | None,
        options.steps_option(defaults.PROFILE, "Steps to profile, after the warm-up."),
    ] = None,
    warmup: Annotated[
        int | None,
        options.warmup_option(
            defaults.PROFILE, "Steps run first, untraced, so that compiles happen."
        ),
    ] = None,
    train: options.Train = None,
    optimizer: options.Optimizer = None,
    logdir: Annotated[
        Path | None,
        typer.Option(
            "--logdir",
            metavar="DIR",
            help="TensorBoard logdir." + options.shown("RUN/tensorboard"),
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="The profile session's name." + options.shown("the run folder's"),
            show_default=False,
        ),
    ] = None,
    tensorboard: Annotated[
        bool, typer.Option("--tensorboard", help="Serve the trace with TensorBoard on localhost.")
    ] = False,
    port: Annotated[
        int, typer.Option("--port", metavar="PORT", help="Port for --tensorboard.")
    ] = 6006,
    max_trace_steps: Annotated[
        int,
        typer.Option(
            "--max-trace-steps",
            min=1,
            metavar="N",
            help="Trace at most N steps; later steps run untraced (bounds memory).",
        ),
    ] = 500,
    out: options.Out = None,
    force: options.Force = False,
    output_format: options.Format = options.OutputFormat.text,
    devices: options.Devices = None,
    mode: options.Mode = options.RunMode.lazy,
    html: options.Html = False,
    hang_timeout: options.HangTimeout = None,
    ranks_timeout: options.RanksTimeout = 300.0,
) -> int:
    """Profile MODEL's steps with torch_xla's profiler and summarize where the time goes.

    The trace is written where TensorBoard and xprof read it
    (LOGDIR/plugins/profile/NAME/*.xplane.pb); the summary needs no UI.
    """
    from xlacli import api
    from xlacli.cli.output import show_comparison, write_html

    if tensorboard:  # before the run, not after it
        from xlacli.flows.tensorboard import check_port_free, check_tensorboard_installed

        check_tensorboard_installed()
        check_port_free(port)
    html = html or output_format is options.OutputFormat.html  # --format html: the page too
    run_options = options.run_options(ctx)
    if mode is options.RunMode.both:
        comparison = api.profile_modes(
            options=run_options, logdir=logdir, name=name, max_trace_steps=max_trace_steps
        )
        show_comparison(comparison, output_format.value, command="profile")
        if html:
            write_html(comparison.runs.values())
        comparison.raise_error()
        return 0
    result = api.profile(
        options=run_options, logdir=logdir, name=name, max_trace_steps=max_trace_steps
    )
    shown_here = _show_profile(result, output_format.value, ranks_timeout, hang_timeout)
    if html:
        write_html([result.run])
    result.run.raise_error()
    result.run.judged_reports()  # a rank the script started failed: its error
    if result.summary.trace_files and shown_here:
        _view(result.summary, tensorboard, port)
    return 0


def _show_profile(
    result: ProfileResult, output_format: str, ranks_timeout: float, hang: float | None
) -> bool:
    """The summary on stdout; a run of several processes: rank 0's, then the
    ranks side by side (as JSON: only the merged report), by the process that
    merges them. True where the trace is to be viewed."""
    from xlacli.flows.ranks import merge_processes, profile_finished
    from xlacli.render.profile import ProfileView
    from xlacli.render.ranks import RanksView
    from xlacli.render.view import show

    ranks = merge_processes(  # the other ranks' summaries are in their folders
        result.run.run_dir,
        result.ranks,
        failed=result.error is not None,
        timeout_s=ranks_timeout,
        hang_timeout_s=hang,
        done=profile_finished,
        compare_steps=False,
    )
    merger = ranks is None or ranks.merged is not None
    if merger and not (output_format == "json" and ranks is not None):
        show(ProfileView(result.summary), output_format)
    if ranks is not None and ranks.merged is not None:  # the stragglers
        show(RanksView(ranks.merged, ranks.folder), "json" if output_format == "json" else "text")
    return merger


def _view(summary: ProfileSummary, tensorboard: bool, port: int) -> None:
    """How to see the trace: the command to run, or (``--tensorboard``) serve it here."""
    from rich.markup import escape

    from xlacli.flows.tensorboard import launch, shell_command
    from xlacli.paths import display_path
    from xlacli.render.console import print_message

    logdir = Path(summary.logdir)
    if not tensorboard:
        # The command alone on its line (after the label), never cropped.
        command = shell_command(Path(display_path(logdir)), port)
        print_message(f"View the trace: [bold]{escape(command)}[/]")
        print_message(f"  then open http://localhost:{port}/#profile")
        return
    process = launch(logdir, port, Path(summary.run_dir) / "tensorboard.log")
    print_message(
        f"TensorBoard is serving {display_path(logdir)} at "
        f"[bold]http://localhost:{port}/#profile[/]  (Ctrl-C to stop)"
    )
    try:
        process.wait()
    except KeyboardInterrupt:
        process.terminate()
        process.wait()
