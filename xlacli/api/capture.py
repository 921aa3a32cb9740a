"""Runs from Python: ``compile`` and ``profile``, one mode each (both: ``api/modes.py``).

Each runs the model in a child process, as the commands do, and returns typed
results: the report, and the error the run ended with (not raised: the
partial report is worth having first; ``raise_error()`` raises it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from xlacli.defaults import COMPILE, PROFILE
from xlacli.run_options import RunKeywords, RunOptions, StrPath, run_options

if TYPE_CHECKING:
    from xlacli.errors import XlacliError
    from xlacli.flows.profile import ProfileRequest
    from xlacli.flows.spawned import SpawnedRun
    from xlacli.report.profile import ProfileSummary
    from xlacli.report.run_report import RunReport


@dataclass(frozen=True)
class Run:
    """One run: its report (saved in ``run_dir``) and the error it ended with.

    ``error`` is None when the run completed; else it is what ``xlacli compile``
    exits with (its ``exit_code``), after the partial report.
    """

    report: RunReport
    error: XlacliError | None = None
    # A script that started its own ranks (torch.multiprocessing.spawn, xmp.spawn):
    # each rank's report, and the ranks merged (``RUN/ranks.json``).
    ranks: SpawnedRun | None = None

    @property
    def run_dir(self) -> Path:
        return Path(self.report.run_dir)

    def raise_error(self) -> None:
        """Raise the run's error, if it ended with one."""
        if self.error is not None:
            raise self.error

    def judged_reports(self) -> list[RunReport]:
        """The reports budgets and checks judge: each rank's the script started, else its own.

        Raises:
            XlacliError: a rank the script started failed (naming the rank).
        """
        from xlacli.flows.spawned import checked_reports

        return checked_reports(self)

    def folders(self) -> list[tuple[Path, RunReport]]:
        """Each run folder with a report: the script's ranks', else this run's."""
        from xlacli.flows.spawned import reported_folders

        return reported_folders(self)


@dataclass(frozen=True)
class ProfileResult:
    """A profile: the run's report (graphs, compiles), the summary of the traced
    steps, and the error the run ended with (None: it completed)."""

    report: RunReport
    summary: ProfileSummary
    error: XlacliError | None = None
    ranks: SpawnedRun | None = None  # as ``Run.ranks``

    @property
    def run(self) -> Run:
        return Run(self.report, self.error, self.ranks)


def compile_run(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    **keywords: Unpack[RunKeywords],
) -> Run:
    """``compile``, returning the run's error beside its report (what the command uses).

    Raises:
        XlacliError: as ``compile``.
    """
    from xlacli.flows.session import capture, prepare_run

    resolved, chosen = prepare_run(run_options(target, options, keywords), "compile", COMPILE)
    result = capture(
        resolved,
        chosen.one_mode(chosen.mode or "lazy"),
        label=f"Compiling {resolved.module or resolved.path.name}",
    )
    return Run(result.report, result.error, result.ranks)


def profile(
    target: StrPath | None = None,
    *,
    options: RunOptions | None = None,
    logdir: StrPath | None = None,
    name: str | None = None,
    max_trace_steps: int = 500,
    **keywords: Unpack[RunKeywords],
) -> ProfileResult:
    """Trace ``steps`` steps after ``warmup`` with torch_xla's profiler (``xlacli profile``).

    The trace goes where TensorBoard and xprof read it
    (``LOGDIR/plugins/profile/NAME``; default logdir ``RUN/tensorboard``);
    ``summary`` is the headless view: step times, the breakdown, top HLO ops.
    Arguments are ``compile``'s (default: 50 steps after 5 of warm-up), plus
    ``logdir``, ``name`` and ``max_trace_steps``. A run that fails mid-way
    returns with ``error`` set, as ``compile_run``.

    Raises:
        XlacliError: as ``compile``; also a logdir that cannot be written, or a
            session ``name`` already in it (without ``force``).
    """
    from xlacli.flows.profile import capture_profile
    from xlacli.flows.session import prepare_run

    resolved, chosen = prepare_run(run_options(target, options, keywords), "profile", PROFILE)
    request = profile_request(chosen, logdir, name, max_trace_steps)
    result, summary = capture_profile(resolved, chosen.one_mode(chosen.mode or "lazy"), request)
    return ProfileResult(result.report, summary, result.error, result.ranks)


def profile_request(
    options: RunOptions, logdir: StrPath | None, name: str | None, max_trace_steps: int
) -> ProfileRequest:
    """A profile's request, once its logdir is writable (and ``force``: its session freed)."""
    from xlacli.flows.profile import ProfileRequest, prepare_logdir

    folder = None if logdir is None else Path(logdir)
    if folder is not None:
        prepare_logdir(folder, name, options.force)
    return ProfileRequest(options, folder, name, max_trace_steps)


def check_budgets(
    report: RunReport, *, max_compiles: int | None = None, fail_on_recompile: bool = False
) -> None:
    """Hold a report to ``xlacli compile``'s budgets.

    Raises:
        CheckFailed: more than ``max_compiles`` compilations, or (``fail_on_recompile``)
            any steady-state recompile (exit 1).
    """
    from xlacli.analysis.check.budgets import check_budgets as check

    check(report, max_compiles=max_compiles, fail_on_recompile=fail_on_recompile)
