"""The capture of ``xlacli profile``: warm up, trace the steps, summarize.

What is shown (the summary, the TensorBoard hint or server) is the command's
(``cli/profile.py``); the Python API (``xlacli.profile``) calls this.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from xlacli.assemble.profile import summarize_profile
from xlacli.capture.discover import ModelTarget
from xlacli.capture.ranks import rank_folder
from xlacli.errors import CaptureError, UsageError
from xlacli.flows.session import CaptureResult, Trace, capture
from xlacli.render.console import print_message
from xlacli.report.profile import ProfileSummary, load_summary, save_summary
from xlacli.run_options import RunOptions

# A few hundred MB of trace at ~0.6 MB a step (examples/transformer.py).
DEFAULT_MAX_TRACE_STEPS = 500


@dataclass(frozen=True)
class ProfileRequest:
    """What a profile captures: the run's options, and where its trace goes."""

    run: RunOptions
    logdir: Path | None = None  # None: RUN/tensorboard
    name: str | None = None  # the session's name; None: the run folder's
    max_trace_steps: int = DEFAULT_MAX_TRACE_STEPS


def capture_profile(
    target: ModelTarget, options: RunOptions, request: ProfileRequest, compared: bool = False
) -> tuple[CaptureResult, ProfileSummary]:
    """Capture and trace the steps with resolved ``options`` in their one mode
    (``compared``: one of a comparison, its session named after it); the summary
    is saved in the run folder."""
    mode = options.mode
    name = request.name
    result = capture(
        target,
        options,
        trace=Trace(
            request.logdir,
            f"{name}-{mode}" if name and compared else name,
            _trace_limit(request.max_trace_steps, options.steps or 0),
        ),
        label=f"Profiling {target.module or target.path.name}" + (f" ({mode})" if compared else ""),
    )
    if result.ranks is not None and result.ranks.reports:  # the script's own ranks: rank 0's
        rank_summary = load_summary(rank_folder(result.paths.root, min(result.ranks.reports)))
        if rank_summary is not None:
            return result, rank_summary
    if result.alone is not None:  # the one process it started: its summary is the run's
        alone_summary = load_summary(result.alone)
        if alone_summary is not None:
            save_summary(alone_summary, result.paths.root)
            return result, alone_summary
    summary = summarize_profile(result.raw, result.report, result.hlo)
    save_summary(summary, result.paths.root)
    return result, summary


def _trace_limit(limit: int, steps: int) -> int:
    """How many steps to trace: the profiler holds every traced event in memory
    until the trace stops (~0.6 MB a step for examples/transformer.py), so a
    long run traces its first steps and runs the rest untraced."""
    if steps > limit:
        print_message(
            f"[yellow]warning:[/] tracing the first {limit} of {steps} steps, to bound the "
            "trace's memory; the others run untraced (--max-trace-steps to change it)"
        )
    return limit


def prepare_logdir(logdir: Path, name: str | None, force: bool) -> None:
    """A writable logdir, without the session ``name`` unless ``force`` replaces it.

    Raises:
        CaptureError: the logdir is not writable.
        UsageError: the session exists and ``force`` is false.
    """
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
