"""The flow of ``xlacli check``: settings, baseline, capture, compare, report."""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

import xlacli.defaults as defaults
from xlacli.analysis.baseline import (
    Baseline,
    baseline_from_report,
    check_settings,
    load_baseline,
    write_baseline,
)
from xlacli.analysis.check import CheckOutcome, check_time_budget, compare
from xlacli.analysis.memory_check import DEFAULT_MEMORY_TOLERANCE, compare_peaks
from xlacli.capture.rank_wait import report_saved
from xlacli.capture.ranks import RankPlace, rank_folder
from xlacli.config import ProjectConfig, load_config, project_runs_dir
from xlacli.errors import EXIT_CHECK_FAILED, CheckFailed, UsageError, XlacliError
from xlacli.flows.ranks import check_finished, check_ranks, finish_rank, launched_rank
from xlacli.flows.session import CaptureResult, capture, configured_target
from xlacli.paths import display_path
from xlacli.render.check import (
    check_json,
    print_check,
    save_check,
    write_github,
    write_github_error,
    write_junit,
    write_junit_error,
)
from xlacli.render.console import print_message
from xlacli.render.ranks import render_ranks
from xlacli.run.request import RunPaths
from xlacli.words import counted

T = TypeVar("T")
DEFAULT_STEPS = defaults.CHECK.steps
DEFAULT_WARMUP = defaults.CHECK.warmup


@dataclass(frozen=True)
class CheckRequest:
    """The options of ``xlacli check``; None means "from [tool.xlacli], else the default"."""

    model: str | None
    baseline: Path | None
    update_baseline: bool
    allow_improvements: bool
    tolerance: float
    time_budget: float | None
    time_tolerance: float
    steps: int | None
    warmup: int | None
    train: bool | None
    optimizer: str | None  # None: the baseline's, else [tool.xlacli]'s, else sgd
    junit: Path | None
    github: bool
    out: Path | None
    force: bool
    output_format: str
    devices: int | None = None  # SPMD devices; None: [tool.xlacli] devices
    mode: str | None = None  # None: the baseline's, else lazy
    html: bool = False
    module: str | None = None  # -m MODULE
    script_args: tuple[str, ...] = ()  # the script's arguments, after --
    hang_timeout: float | None = None  # --hang-timeout: stop a run where no rank progresses
    ranks_timeout: float = 300.0  # under a launcher: rank 0's wait for the other ranks


def run_check(request: CheckRequest) -> int:
    """Run the check and return its exit code (raises ``XlacliError`` for failures).

    A check that cannot run (exit 2, 3, 4, 130) still writes its ``--junit``
    and ``--github`` outputs: an error entry with the reason, so a CI reporter
    shows why rather than nothing.
    """
    try:
        return _run_check(request)
    except XlacliError as error:
        if error.exit_code != EXIT_CHECK_FAILED:
            _report_error_to_ci(error, request)
        raise


def _report_error_to_ci(error: XlacliError, request: CheckRequest) -> None:
    if request.junit is not None:
        with contextlib.suppress(XlacliError):  # the error being reported matters more
            write_junit_error(error, request.junit)
    if request.github:
        write_github_error(error, to_stderr=request.output_format == "json")


def _run_check(request: CheckRequest) -> int:
    config = load_config()
    target = configured_target(request.model, request.module, request.script_args, config, "check")
    baseline_path = request.baseline or config.baseline
    if baseline_path is None:
        raise UsageError(
            "no baseline to compare with",
            hint="pass --baseline FILE, or set baseline in [tool.xlacli] of pyproject.toml",
        )
    label = display_path(target.path) + (f":{target.entry}" if target.entry else "")
    baseline = None if request.update_baseline else load_baseline(baseline_path, label)
    if baseline is not None:
        chosen = _chosen_settings(request, config)
        check_settings(baseline, {**chosen, "script_args": tuple(target.args)})
    settings = _run_settings(request, baseline, config, script=target.is_script)
    mode = _check_mode(request.mode, baseline, baseline_path)
    result = capture(
        target,
        mode=mode,
        steps=settings.steps,
        train=settings.train,
        optimizer=settings.optimizer,
        out=request.out,
        force=request.force,
        explain_warmup=settings.warmup,
        label=f"Checking {target.module or target.path.name}",
        devices=request.devices if request.devices is not None else config.devices,
        runs_dir=project_runs_dir(config),
        hang_timeout=request.hang_timeout,
    )
    judge = _Judge(
        baseline, baseline_path, settings.optimizer, config.memory_tolerance, tuple(target.args)
    )
    place = launched_rank()
    if result.ranks is not None:  # the script started its own ranks
        return _judge_spawned(request, result, judge)
    if place is None:
        return _judge(request, result, judge)
    try:  # a rank of a launched run: rank 0 also judges the ranks together
        code = _judge(request, result, judge, place)
    except XlacliError:
        _finish_rank(request, result, place, failed=True, updating=baseline is None)
        raise
    _finish_rank(request, result, place, failed=False, updating=baseline is None)
    return code


@dataclass(frozen=True)
class _Judge:
    """What a run is judged against."""

    baseline: Baseline | None  # None: --update-baseline
    path: Path
    optimizer: str
    memory_tolerance: float | None
    script_args: tuple[str, ...] = ()  # recorded in the baseline: another is a mismatch


def _finish_rank(
    request: CheckRequest,
    result: CaptureResult,
    place: RankPlace,
    *,
    failed: bool,
    updating: bool,
) -> None:
    out = result.paths.root.parent
    merged = finish_rank(
        place,
        out,
        failed=failed,
        output_format=request.output_format,
        timeout_s=request.ranks_timeout,
        hang_timeout_s=request.hang_timeout,
        done=report_saved if updating else check_finished,
    )
    if merged is not None and not failed:
        check_ranks(merged, out)


def _judge_spawned(request: CheckRequest, result: CaptureResult, judge: _Judge) -> int:
    """Judge each rank the script started, as a launched rank is judged (rank 0
    prints and writes the shared files), then the ranks together."""
    assert result.ranks is not None
    if result.error is not None:  # the main process's own failure comes first
        raise result.error
    merged, root = result.ranks.merged, result.paths.root
    failure: XlacliError | None = None
    for rank, report in result.ranks.reports.items():
        rank_result = dataclasses.replace(
            result,
            report=report,
            paths=RunPaths(rank_folder(root, rank)),
            error=result.ranks.errors[rank],
            ranks=None,
        )
        try:
            _judge(request, rank_result, judge, RankPlace(rank, merged.world_size, merged.launcher))
        except XlacliError as error:
            failure = failure or error
    render_ranks(merged, root, request.output_format)
    if failure is not None:
        raise failure
    check_ranks(merged, root)
    return 0


def _judge(
    request: CheckRequest, result: CaptureResult, judge: _Judge, place: RankPlace | None = None
) -> int:
    """Compare the run with the baseline (or write it), print and save the outcome.
    Under a launcher only rank 0 prints and writes the shared files."""
    baseline, baseline_path = judge.baseline, judge.path
    merger = place is None or place.is_merger
    if result.error is not None:
        _write_html(request, result.paths.root)
        raise result.error
    current = baseline_from_report(result.report, baseline_path, judge.optimizer, judge.script_args)
    if baseline is None:
        if merger:  # one baseline: rank 0's
            write_baseline(current, baseline_path)
        _write_html(request, result.paths.root)
        if not merger:  # rank 0 wrote it
            return 0
        print_message(
            f"Baseline written to {display_path(baseline_path)}: "
            f"{counted(current.compilations, 'compilation')}, "
            f"{counted(current.distinct_graphs, 'graph')}. Commit it."
        )
        return 0
    outcome = compare(baseline, current, request.tolerance)
    memory_tolerance = _first(judge.memory_tolerance, DEFAULT_MEMORY_TOLERANCE)
    peaks = compare_peaks(
        baseline.peak_bytes,
        current.peak_bytes,
        current.peak_buffers,
        baseline.peak_buffers,
        memory_tolerance,
    )
    outcome = CheckOutcome((*outcome.results, *peaks))
    if request.time_budget is not None:
        budget = check_time_budget(
            result.report.total_compile_time_s, request.time_budget, request.time_tolerance
        )
        outcome = CheckOutcome((*outcome.results, budget))
    if merger:  # the other ranks' outcomes are in their folders
        print_check(outcome, result.report, baseline_path, request.output_format)
    save_check(check_json(outcome, result.report, baseline_path), result.paths.root)
    _write_html(request, result.paths.root)
    if request.junit is not None and merger:
        write_junit(outcome, request.junit, allow_improvements=request.allow_improvements)
    if request.github and merger:
        # Workflow commands go to stdout, unless stdout is reserved for JSON.
        write_github(outcome, result.report, to_stderr=request.output_format == "json")
    _verdict(outcome, request.allow_improvements, baseline_path)
    return 0


def _verdict(outcome: CheckOutcome, allow_improvements: bool, baseline_path: Path) -> None:
    if outcome.regressions:
        names = ", ".join(result.name for result in outcome.regressions[:3])
        more = len(outcome.regressions) - 3
        raise CheckFailed(
            f"{counted(len(outcome.regressions), 'check')} "
            f"regressed: {names}" + (f" and {more} more" if more > 0 else ""),
        )
    if outcome.improvements and not allow_improvements:
        raise CheckFailed(
            f"{counted(len(outcome.improvements), 'count')} "
            f"improved beyond the tolerance; the baseline {display_path(baseline_path)} is stale",
            hint="rerun with --update-baseline and commit it (or pass --allow-improvements)",
        )


@dataclass(frozen=True)
class _Settings:
    steps: int | None  # None: a script runs to its end
    warmup: int
    train: bool
    optimizer: str


def _run_settings(
    request: CheckRequest, baseline: Baseline | None, config: ProjectConfig, *, script: bool
) -> _Settings:
    """Each setting: the option, else the baseline's, else [tool.xlacli]'s, else the default."""
    return _Settings(
        steps=_first(
            request.steps,
            baseline.steps if baseline else None,
            config.steps,
            None if script else DEFAULT_STEPS,  # a script: to its end
        ),
        warmup=_first(
            request.warmup, baseline.warmup if baseline else None, config.warmup, DEFAULT_WARMUP
        ),
        train=_first(request.train, baseline.train if baseline else None, config.train, False),
        optimizer=_first(
            request.optimizer,
            (baseline.optimizer or None) if baseline else None,
            config.optimizer,
            "sgd",
        ),
    )


def _chosen_settings(request: CheckRequest, config: ProjectConfig) -> dict[str, object]:
    """The settings asked for, by option or in [tool.xlacli] (None: not asked)."""
    asked = {
        "steps": (request.steps, config.steps),
        "warmup": (request.warmup, config.warmup),
        "train": (request.train, config.train),
        "optimizer": (request.optimizer, config.optimizer),
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


def _write_html(request: CheckRequest, run_dir: Path) -> None:
    if request.html:
        from xlacli.render.html.run_page import announce_run_html

        announce_run_html(run_dir)


def _first(*values: T | None) -> T:
    """The first value that is set: the option, the baseline's, the config's, the default."""
    # The last, the default, may itself be None (a script then runs to its end).
    return cast(T, next((value for value in values if value is not None), values[-1]))
