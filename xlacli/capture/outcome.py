"""How a capture ended, as the error the parent should exit with."""

from __future__ import annotations

from xlacli.capture.runner import ChildOutcome, log_tail
from xlacli.errors import (
    EXIT_INTERRUPTED,
    CaptureError,
    CheckFailed,
    ModelError,
    NoStepError,
    UsageError,
    XlacliError,
)
from xlacli.report.run_report import ErrorRecord
from xlacli.run_folder.hang import STACKS_FILE
from xlacli.run_folder.request import RunPaths

_ERROR_TYPES: dict[str, type[XlacliError]] = {
    cls.__name__: cls for cls in (CaptureError, CheckFailed, ModelError, NoStepError, UsageError)
}


class HangStopped(ModelError):
    """No rank made progress for ``--hang-timeout`` seconds: the run was stopped."""


class Interrupted(XlacliError):
    """Ctrl-C (or SIGTERM) stopped the run; the partial report was kept."""

    exit_code = EXIT_INTERRUPTED


def outcome_error(
    outcome: ChildOutcome, paths: RunPaths, signal_name: str = ""
) -> XlacliError | None:
    """The error a finished child stands for, or None when it succeeded.

    ``signal_name``: the signal xlacli got (SIGINT, SIGTERM), if any, even one
    that came after the child had finished.
    """
    step = len(outcome.log.steps)
    event = outcome.log.error
    by = f" ({signal_name})" if signal_name else ""
    if outcome.hung_after_s is not None:  # the watchdog's stop comes as a signal
        return HangStopped(
            f"nothing progressed for {outcome.hung_after_s:.0f} s (--hang-timeout) "
            f"during step {step}: "
            "stopped; the stacks and the partial report were kept",
            hint=f"the stacks are in {paths.root / STACKS_FILE}",
        )
    if outcome.interrupted or (event and event.kind == "interrupted"):
        return Interrupted(f"interrupted during step {step}{by}; the partial report was kept")
    if signal_name:
        return Interrupted(f"interrupted after the run{by}; the report was kept")
    if event is not None:
        cls = _ERROR_TYPES.get(event.kind, CaptureError)
        return cls(event.message, hint=event.hint, details=event.details)
    if outcome.returncode < 0:
        return CaptureError(
            f"the model process was killed by {outcome.signal_name} during step {step}; "
            "the partial report was kept",
            details=_crash_stack(paths) or log_tail(paths) or None,
            hint=f"its output is in {paths.child_log}",
        )
    if outcome.returncode != 0 or not outcome.log.ended:
        return CaptureError(
            f"the model process exited with code {outcome.returncode} during step {step}",
            details=log_tail(paths) or None,
            hint=f"its output is in {paths.child_log}",
        )
    return None


def _crash_stack(paths: RunPaths) -> str | None:
    """The crashing frames faulthandler printed in child.log, innermost first."""
    from xlacli.analysis.ranks.crash_stack import crash_details
    from xlacli.parse.frames import current_code_roots

    try:
        log = paths.child_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return crash_details(log, current_code_roots())


def error_record(error: XlacliError | None) -> ErrorRecord | None:
    """The report's record of an error."""
    if error is None:
        return None
    kind = {
        Interrupted: "interrupted",
        HangStopped: "hang",
        ModelError: "model",
        UsageError: "usage",
        NoStepError: "no_step",
    }.get(type(error), "capture")
    return ErrorRecord(kind, error.message, error.exit_code, error.details)
