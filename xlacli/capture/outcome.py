"""How a capture ended, as the error the parent should exit with."""

from __future__ import annotations

from xlacli.capture.runner import ChildOutcome, log_tail
from xlacli.errors import (
    EXIT_INTERRUPTED,
    CaptureError,
    CheckFailed,
    ModelError,
    UsageError,
    XlacliError,
)
from xlacli.report.run import ErrorRecord
from xlacli.run.request import RunPaths

_ERROR_TYPES: dict[str, type[XlacliError]] = {
    cls.__name__: cls for cls in (CaptureError, CheckFailed, ModelError, UsageError)
}


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
    if outcome.interrupted or (event and event.get("kind") == "interrupted"):
        return Interrupted(f"interrupted during step {step}{by}; the partial report was kept")
    if signal_name:
        return Interrupted(f"interrupted after the run{by}; the report was kept")
    if event is not None:
        cls = _ERROR_TYPES.get(event.get("kind", ""), CaptureError)
        return cls(event["message"], hint=event.get("hint"), details=event.get("details"))
    if outcome.returncode < 0:
        return CaptureError(
            f"the model process was killed by {outcome.signal_name} during step {step}; "
            "the partial report was kept",
            details=log_tail(paths) or None,
            hint=f"its output is in {paths.child_log}",
        )
    if outcome.returncode != 0 or not outcome.log.ended:
        return CaptureError(
            f"the model process exited with code {outcome.returncode} during step {step}",
            details=log_tail(paths) or None,
            hint=f"its output is in {paths.child_log}",
        )
    return None


def error_record(error: XlacliError | None) -> ErrorRecord | None:
    """The report's record of an error."""
    if error is None:
        return None
    kind = {
        Interrupted: "interrupted",
        ModelError: "model",
        UsageError: "usage",
    }.get(type(error), "capture")
    return ErrorRecord(kind, error.message, error.exit_code, error.details)
