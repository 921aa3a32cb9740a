"""``xlacli.api.check``: a run's compile counts against a committed baseline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from xlacli.run_options import RunKeywords, RunOptions, StrPath, run_options

if TYPE_CHECKING:
    from xlacli.flows.check import CheckRun


def check(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    baseline: StrPath | None = None,
    update_baseline: bool = False,
    tolerance: float = 0.0,
    time_budget: float | None = None,
    time_tolerance: float = 0.2,
    **keywords: Unpack[RunKeywords],
) -> CheckRun:
    """Run ``target`` and compare its counts with ``baseline`` (``xlacli check``).

    The run's options are ``compile``'s (``options``, or its keywords); each
    left None is the baseline's, else ``[tool.xlacli]``'s, else the command's
    default; a setting that contradicts the baseline is refused.

    Args:
        target: As ``compile``'s; None: the project's.
        baseline: The baseline JSON file; None: ``[tool.xlacli] baseline``.
        update_baseline: Write the baseline from this run instead of comparing.
        tolerance: The allowed relative change of each count (0.05 = 5%).
        time_budget: Also fail above this total compile time (seconds), with
            ``time_tolerance`` of slack.

    Returns:
        The run's report and error, and the ``outcome`` of each check (None when
        the baseline was written or the run failed); ``failure()`` is the
        check's ``CheckFailed``, if it failed. The outcome is also kept in the
        run folder (``check.json``).

    Raises:
        UsageError: no baseline, a bad one, or settings it contradicts.
        XlacliError: as ``compile``.
    """
    from xlacli.flows.check import CheckRequest, run_check

    return run_check(
        CheckRequest(
            run=run_options(target, options, keywords),
            baseline=None if baseline is None else Path(baseline),
            update_baseline=update_baseline,
            tolerance=tolerance,
            time_budget=time_budget,
            time_tolerance=time_tolerance,
        )
    )
