"""Runs from Python: ``compile`` and ``profile``, one mode each (both: ``api/modes.py``).

Each runs the model in a child process, as the commands do, and returns typed
results: the report, and the error the run ended with (not raised: the
partial report is worth having first; ``raise_error()`` raises it).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import xlacli.defaults as defaults

if TYPE_CHECKING:
    from xlacli.capture.discover import ModelTarget
    from xlacli.errors import XlacliError
    from xlacli.flows.profile import ProfileRequest
    from xlacli.flows.spawned import SpawnedRun
    from xlacli.report.profile import ProfileSummary
    from xlacli.report.run_report import RunReport

StrPath = str | os.PathLike[str]


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
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int | None = None,
    warmup: int = defaults.COMPILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    mode: str = "lazy",
    out: StrPath | None = None,
    force: bool = False,
    hang_timeout: float | None = None,
) -> Run:
    """``compile``, returning the run's error beside its report (what the command uses).

    Raises:
        XlacliError: as ``compile``.
    """
    from xlacli.flows.session import capture

    resolved = target_of(target, module, args, "compile")
    devices, runs_dir = project_defaults(devices)
    result = capture(
        resolved,
        steps=steps,
        train=train,
        optimizer=optimizer,
        out=path_of(out),
        force=force,
        label=f"Compiling {resolved.module or resolved.path.name}",
        explain_warmup=warmup,
        mode=_mode(mode),
        hang_timeout=hang_timeout,
        devices=devices,
        runs_dir=runs_dir,
    )
    return Run(result.report, result.error, result.ranks)


def profile(
    target: StrPath | None = None,
    *,
    module: str | None = None,
    args: Sequence[str] = (),
    steps: int = defaults.PROFILE.steps,
    warmup: int = defaults.PROFILE.warmup,
    train: bool = False,
    optimizer: str = "sgd",
    devices: int | None = None,
    mode: str = "lazy",
    logdir: StrPath | None = None,
    name: str | None = None,
    max_trace_steps: int = 500,
    out: StrPath | None = None,
    force: bool = False,
    hang_timeout: float | None = None,
) -> ProfileResult:
    """Trace ``steps`` steps after ``warmup`` with torch_xla's profiler (``xlacli profile``).

    The trace goes where TensorBoard and xprof read it
    (``LOGDIR/plugins/profile/NAME``; default logdir ``RUN/tensorboard``);
    ``summary`` is the headless view: step times, the breakdown, top HLO ops.
    Arguments are ``compile``'s, plus ``logdir``, ``name`` and ``max_trace_steps``.
    A run that fails mid-way returns with ``error`` set, as ``compile_run``.

    Raises:
        XlacliError: as ``compile``; also a logdir that cannot be written, or a
            session ``name`` already in it (without ``force``).
    """
    from xlacli.flows.profile import ProfileRequest, capture_profile

    resolved = target_of(target, module, args, "profile")
    request = ProfileRequest(
        steps=steps,
        warmup=warmup,
        train=train,
        optimizer=optimizer,
        logdir=path_of(logdir),
        name=name,
        out=path_of(out),
        force=force,
        devices=devices,
        max_trace_steps=max_trace_steps,
        mode=_mode(mode),
        hang_timeout=hang_timeout,
    )
    result, summary = capture_profile(resolved, with_logdir(request))
    return ProfileResult(result.report, summary, result.error, result.ranks)


def with_logdir(request: ProfileRequest) -> ProfileRequest:
    """The request, once its logdir is writable (and ``force``: its session freed)."""
    from xlacli.flows.profile import prepare_logdir

    if request.logdir is not None:
        prepare_logdir(request.logdir, request.name, request.force)
    return request


def target_of(
    target: StrPath | None, module: str | None, args: Sequence[str], action: str
) -> ModelTarget:
    """The target given, else the project's (``[tool.xlacli]`` model or module)."""
    from xlacli.config import load_config
    from xlacli.flows.session import configured_target

    text = None if target is None else os.fspath(target)
    return configured_target(text, module, args, load_config(), action)


def project_defaults(devices: int | None) -> tuple[int | None, Path | None]:
    """What ``[tool.xlacli]`` sets for every run: its devices (unless given) and runs folder."""
    from xlacli.config import load_config, project_runs_dir

    config = load_config()
    return (devices if devices is not None else config.devices), project_runs_dir(config)


def _mode(mode: str) -> str:
    from xlacli.errors import UsageError

    if mode not in ("lazy", "dynamo"):
        raise UsageError(f"mode {mode!r}: expected 'lazy' or 'dynamo'")
    return mode


def path_of(path: StrPath | None) -> Path | None:
    return None if path is None else Path(path)


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
