"""The capture and judgement of ``xlacli check``: settings, baseline, capture, compare.

What is shown and written for CI (the table, JUnit, GitHub annotations) and
the exit code are the command's (``cli/check.py``); the Python API
(``xlacli.api.check``) calls this.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

import xlacli.defaults as defaults
from xlacli.analysis.check.baseline import (
    Baseline,
    baseline_from_report,
    check_settings,
    load_baseline,
    write_baseline,
)
from xlacli.analysis.check.baseline_pairing import pair_graphs, renamed_baseline
from xlacli.analysis.check.checks import CheckOutcome, check_time_budget, compare
from xlacli.analysis.check.memory_check import DEFAULT_MEMORY_TOLERANCE, compare_peaks
from xlacli.capture.discover import ModelTarget
from xlacli.capture.ranks import rank_folder
from xlacli.config import ProjectConfig, load_config
from xlacli.errors import CheckFailed, UsageError, XlacliError, internal_error
from xlacli.flows.ranks import launched_rank
from xlacli.flows.session import capture, configured_target
from xlacli.paths import display_path
from xlacli.render.check import check_error_json, check_json
from xlacli.report.check import save_check
from xlacli.report.run_report import RunReport
from xlacli.run_options import RunOptions
from xlacli.units import counted

if TYPE_CHECKING:
    from xlacli.flows.session import CaptureResult
    from xlacli.flows.spawned import SpawnedRun

T = TypeVar("T")


@dataclass(frozen=True)
class CheckRequest:
    """What a check runs (``run``: each option None is the baseline's, else
    ``[tool.xlacli]``'s, else the default) and how it compares."""

    run: RunOptions = field(default_factory=RunOptions)
    baseline: Path | None = None
    update_baseline: bool = False
    tolerance: float = 0.0
    time_budget: float | None = None
    time_tolerance: float = 0.2


@dataclass(frozen=True)
class CheckRun:
    """A check: the run, and its counts against the baseline (or the baseline written).

    ``outcome`` is None when the baseline was written (``update_baseline``) or
    the run failed (``error``; the report is the partial one).
    """

    report: RunReport
    error: XlacliError | None
    baseline_path: Path
    outcome: CheckOutcome | None = None
    written: Baseline | None = None  # the baseline this run wrote
    updating: bool = False  # asked to write the baseline, not to compare with it
    # A script that started its own ranks: each rank's check (rank 0 writes the
    # baseline and prints), and the ranks merged (RUN/ranks.json).
    rank_checks: Mapping[int, CheckRun] = field(default_factory=dict)
    ranks: SpawnedRun | None = None

    def failure(self, allow_improvements: bool = False) -> CheckFailed | None:
        """The check's failure (exit 1): a regression, or an improvement beyond the
        tolerance unless ``allow_improvements`` (the baseline is then stale)."""
        outcome = self.outcome
        if outcome is not None and outcome.regressions:
            names = ", ".join(result.name for result in outcome.regressions[:3])
            more = len(outcome.regressions) - 3
            return CheckFailed(
                f"{counted(len(outcome.regressions), 'check')} "
                f"regressed: {names}" + (f" and {more} more" if more > 0 else ""),
            )
        if outcome is not None and outcome.improvements and not allow_improvements:
            return CheckFailed(
                f"{counted(len(outcome.improvements), 'count')} improved beyond the "
                f"tolerance; the baseline {display_path(self.baseline_path)} is stale",
                hint="rerun with --update-baseline and commit it (or pass --allow-improvements)",
            )
        return None


def run_check(request: CheckRequest) -> CheckRun:
    """Capture the target and compare it with its baseline (or write the baseline).

    The outcome is kept in the run folder (``check.json``); under a launcher
    only rank 0 writes the baseline.

    Raises:
        UsageError: no target, no baseline, or settings the baseline contradicts.
        XlacliError: the capture could not start.
    """
    config = load_config()
    target = configured_target(request.run, config, "check")
    baseline_path = request.baseline or config.baseline
    if baseline_path is None:
        raise UsageError(
            "no baseline to compare with",
            hint="pass --baseline FILE, or set baseline in [tool.xlacli] of pyproject.toml",
        )
    baseline = None if request.update_baseline else _checked_baseline(request, config, target)
    options = _run_settings(request.run, baseline, config, baseline_path).resolved(
        defaults.CHECK, config, script=target.is_script
    )
    result = capture(
        target, options, label=f"Checking {target.module or target.path.name}", command="check"
    )
    checked = CheckRun(result.report, result.error, baseline_path, updating=request.update_baseline)
    if result.error is not None:  # the run failed: its folder still says why
        if not request.update_baseline and result.paths.root.is_dir():
            with contextlib.suppress(OSError):
                save_check(
                    check_error_json(result.error, result.report, baseline_path), result.paths.root
                )
        return checked
    judge = _Judge(
        request,
        config,
        baseline,
        baseline_path,
        options.optimizer or "sgd",
        tuple(target.args),
        run_to_end=options.steps is None,
    )
    if result.ranks is not None:  # the script started its own ranks: each is checked
        return _check_spawned(result, judge)
    place = launched_rank()
    return judge(result.report, result.paths.root, place is None or place.is_merger)


@dataclass(frozen=True)
class _Judge:
    """Compares one run (a rank's) with the baseline, or writes the baseline."""

    request: CheckRequest
    config: ProjectConfig
    baseline: Baseline | None
    baseline_path: Path
    optimizer: str
    script_args: tuple[str, ...]
    run_to_end: bool  # a script run without --steps: its check runs it to its end too

    def __call__(self, report: RunReport, folder: Path, merger: bool) -> CheckRun:
        current = baseline_from_report(
            report,
            self.baseline_path,
            self.optimizer,
            self.script_args,
            run_to_end=self.run_to_end,
        )
        if self.baseline is None:
            if merger:  # one baseline: rank 0's
                write_baseline(current, self.baseline_path)
            written = current if merger else None
            return CheckRun(report, None, self.baseline_path, written=written, updating=True)
        try:
            outcome = _outcome(self.request, self.baseline, current, report, self.config)
            save_check(check_json(outcome, report, self.baseline_path), folder)
        except Exception as error:  # a bug in xlacli: the check says so, the run is kept
            failed = internal_error(error, "comparing the run with its baseline")
            with contextlib.suppress(OSError):
                save_check(check_error_json(failed, report, self.baseline_path), folder)
            return CheckRun(report, failed, self.baseline_path)
        return CheckRun(report, None, self.baseline_path, outcome)


def _check_spawned(result: CaptureResult, judge: _Judge) -> CheckRun:
    """Each rank the script started, checked as a launched rank is (rank 0
    writes the baseline); the check of the lowest rank stands for the run."""
    assert result.ranks is not None
    checks: dict[int, CheckRun] = {}
    first = min(result.ranks.reports, default=None)
    for rank, report in result.ranks.reports.items():
        error = result.ranks.errors.get(rank)
        if error is not None:
            checks[rank] = CheckRun(
                report, error, judge.baseline_path, updating=judge.baseline is None
            )
            continue
        checks[rank] = judge(report, rank_folder(result.paths.root, rank), rank == first)
    lead = (
        checks[first] if first is not None else CheckRun(result.report, None, judge.baseline_path)
    )
    return dataclasses.replace(lead, rank_checks=checks, ranks=result.ranks)


def _checked_baseline(
    request: CheckRequest, config: ProjectConfig, target: ModelTarget
) -> Baseline:
    """The baseline, refused when the settings asked for contradict it."""
    path = cast(Path, request.baseline or config.baseline)
    label = display_path(target.path) + (f":{target.entry}" if target.entry else "")
    baseline = load_baseline(path, label)
    check_settings(baseline, {**_chosen_settings(request, config), "script_args": target.args})
    return baseline


def _outcome(
    request: CheckRequest,
    baseline: Baseline,
    current: Baseline,
    report: RunReport,
    config: ProjectConfig,
) -> CheckOutcome:
    """Every check: the counts, the memory peaks, and the compile-time budget, each
    graph of the run compared with the graph of the baseline it is."""
    pairing = pair_graphs(baseline, current)
    # The run's graph keys in the report's order (baseline_from_report keeps it).
    keys = [pairing.renamed.get(key, key) for key in current.graph_sites]
    current = renamed_baseline(current, pairing)
    outcome = compare(baseline, current, request.tolerance)
    peaks = compare_peaks(
        baseline.peak_bytes,
        current.peak_bytes,
        current.peak_buffers,
        baseline.peak_buffers,
        _first(config.memory_tolerance, DEFAULT_MEMORY_TOLERANCE),
    )
    results = (*outcome.results, *peaks)
    if request.time_budget is not None:
        budget = check_time_budget(
            report.total_compile_time_s, request.time_budget, request.time_tolerance
        )
        results = (*results, budget)
    new = set(pairing.new)
    hashes = tuple(g.hash for key, g in zip(keys, report.graphs, strict=True) if key in new)
    return CheckOutcome(results, new_graph_hashes=hashes)


def _run_settings(
    options: RunOptions, baseline: Baseline | None, config: ProjectConfig, path: Path
) -> RunOptions:
    """Each setting: the option, else the baseline's, else [tool.xlacli]'s (the
    command's default comes after, in ``RunOptions.resolved``)."""
    return dataclasses.replace(
        options,
        steps=_first(
            options.steps,
            # A script recorded to its end is checked to its end: its steps are
            # what it did, not a limit (a limit would cut its last reads).
            baseline.steps if baseline and not baseline.run_to_end else None,
            None if baseline and baseline.run_to_end else config.steps,
        ),
        warmup=_first(options.warmup, baseline.warmup if baseline else None, config.warmup),
        train=_first(options.train, baseline.train if baseline else None, config.train),
        optimizer=_first(
            options.optimizer, (baseline.optimizer or None) if baseline else None, config.optimizer
        ),
        mode=_check_mode(options.mode, baseline, path),
    )


def _chosen_settings(request: CheckRequest, config: ProjectConfig) -> dict[str, object]:
    """The settings asked for, by option or in [tool.xlacli] (None: not asked)."""
    run = request.run
    asked = {
        "steps": (run.steps, config.steps),
        "warmup": (run.warmup, config.warmup),
        "train": (run.train, config.train),
        "optimizer": (run.optimizer, config.optimizer),
    }
    return {
        name: option if option is not None else configured
        for name, (option, configured) in asked.items()
    }


def _check_mode(requested: str | None, baseline: Baseline | None, path: Path) -> str:
    """The mode to check in: the option, else the baseline's; never both, and
    never another mode than the baseline's (its counts would not compare)."""
    if requested == "both":
        raise UsageError("check compares one mode with its baseline: pass --mode lazy or dynamo")
    mode = _first(requested, baseline.mode if baseline else None, "lazy")
    if baseline is not None and mode != baseline.mode:
        raise UsageError(
            f"baseline {display_path(path)} was recorded with --mode {baseline.mode}, not {mode}",
            hint="check in the baseline's mode, or --update-baseline to record this one",
        )
    return mode


def _first(*values: T | None) -> T:
    """The first value that is set: the option, the baseline's, the config's, the default."""
    # The last, the default, may itself be None (a script then runs to its end).
    return cast(T, next((value for value in values if value is not None), values[-1]))
