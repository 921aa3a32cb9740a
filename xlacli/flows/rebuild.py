"""Rebuilding a report from a run folder's raw files, when xlacli never wrote it.

xlacli killed outright (SIGKILL, the OOM killer, a closed CI runner) cannot
write ``report.json``; but the child flushed ``events.jsonl`` line by line and
XLA wrote its dumps as it went. Everything in a report is derived from those
files, so ``xlacli report RUN`` derives it again.
"""

from __future__ import annotations

from pathlib import Path

from xlacli.capture.discover import ModelTarget
from xlacli.capture.outcome import outcome_error
from xlacli.capture.runner import ChildOutcome
from xlacli.errors import CaptureError, UsageError, XlacliError
from xlacli.flows.session import report_from_run
from xlacli.report.profile import save_summary
from xlacli.report.run_report import REPORT_FILE
from xlacli.run_folder.events import ChildLog, read_events
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.units import counted

COMPILE_EXPLAIN_WARMUP = 2


def can_rebuild(run_dir: Path) -> bool:
    """A run folder with its request but no report: the run never finished."""
    return (
        run_dir.is_dir()
        and not (run_dir / REPORT_FILE).exists()
        and RunPaths(run_dir).request.exists()
    )


def rebuild_report(run_dir: Path) -> None:
    """Write ``report.json`` (and a profile's summary) from the raw files.

    Raises:
        UsageError: the request file is unreadable.
    """
    from xlacli.assemble.profile import summarize_profile

    paths = RunPaths(run_dir.resolve())
    try:
        request = CaptureRequest.load(paths.request)
    except (OSError, ValueError, TypeError) as problem:
        raise UsageError(f"cannot read {paths.request}: {problem}") from None
    log = read_events(paths.events)
    error = _rebuilt_error(paths, log)
    target = ModelTarget(
        Path(request.model_path),
        request.model_entry,
        kind=request.target_kind,
        module=request.module,
        args=tuple(request.script_args),
    )
    warmup = request.warmup if request.profile_logdir else COMPILE_EXPLAIN_WARMUP
    raw, report, hlo = report_from_run(paths, request, log, target, warmup, error)
    if request.profile_logdir is not None:
        save_summary(summarize_profile(raw, report, hlo), paths.root)


def _rebuilt_error(paths: RunPaths, log: ChildLog) -> XlacliError | None:
    if log.error is not None:
        return outcome_error(ChildOutcome(0, log, False), paths)
    if log.ended:
        return None
    return CaptureError(
        f"the run stopped after {counted(len(log.steps), 'step')} and xlacli wrote no "
        "report (was it killed?); this report was rebuilt from the run's raw files"
    )
