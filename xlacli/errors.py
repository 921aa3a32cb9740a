"""The error type that carries its exit code, and its subclasses.

Every expected failure is one of these. The CLI's single error boundary
(``xlacli.cli.main``) prints ``xlacli: <message>`` (and the hint, if any) on
stderr and exits with ``exit_code``; users never see our traceback for their
own mistake.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1  # a check or a diff found a difference
EXIT_USAGE = 2
EXIT_MODEL = 3  # the user's model failed
EXIT_ENVIRONMENT = 4  # environment or capture failure
EXIT_INCOMPLETE = 5  # the report was written, but an analysis failed (a bug in xlacli)
EXIT_NO_STEP = 6  # the run ended without one step: nothing was measured
EXIT_INTERRUPTED = 130


class XlacliError(Exception):
    """An expected failure, with the exit code it maps to."""

    exit_code = EXIT_ENVIRONMENT

    def __init__(self, message: str, *, hint: str | None = None, details: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        # Multi-line context printed after the message (the user's own frames).
        self.details = details


class CheckFailed(XlacliError):
    """A check, budget or diff found a difference."""

    exit_code = EXIT_CHECK_FAILED


class UsageError(XlacliError):
    """Bad command-line input: a missing file, a wrong option, a bad baseline."""

    exit_code = EXIT_USAGE


class ModelError(XlacliError):
    """The user's model code raised, or the child running it died."""

    exit_code = EXIT_MODEL


class NoStepError(XlacliError):
    """A script (or a model file run as one) ended without a step: the run
    measured nothing, which is a failure to report, not an empty success."""

    exit_code = EXIT_NO_STEP


class CaptureError(XlacliError):
    """The environment is broken or the capture itself failed."""

    exit_code = EXIT_ENVIRONMENT


class IncompleteReport(XlacliError):
    """The run completed and its report was written, but an analysis raised: its
    section is missing (listed in the report's ``problems``)."""

    exit_code = EXIT_INCOMPLETE


class InternalError(XlacliError):
    """xlacli itself failed (a bug): one line and exit 5, never a traceback on the
    terminal; the traceback is kept in a file the message names."""

    exit_code = EXIT_INCOMPLETE


class HloParseError(UsageError):
    """Malformed HLO text, with the position of the problem."""

    def __init__(self, filename: str, line: int, column: int, expected: str, found: str = ""):
        where = f"{filename}:{line}:{column}"
        found_part = f", found {found}" if found else ""
        super().__init__(f"{where}: malformed HLO: expected {expected}{found_part}")
        self.filename = filename
        self.line = line
        self.column = column
        self.expected = expected
        self.found = found


def internal_error(error: BaseException, doing: str) -> InternalError:
    """A bug in xlacli as an ``InternalError``: its traceback written to a file
    (the message names it, for a bug report), never printed on the terminal."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(error))
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="xlacli-traceback-", suffix=".txt", delete=False, encoding="utf-8"
        ) as handle:
            handle.write(text)
        kept = f"; its traceback is in {handle.name}"
    except OSError:
        kept = ""
    return InternalError(
        f"xlacli failed while {doing}: {type(error).__name__}: {error}",
        hint=f"this is a bug in xlacli{kept}: please report it",
    )
