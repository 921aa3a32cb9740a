"""The flow of ``xlacli check``: settings, baseline, capture, compare, report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from xlacli.analysis.baseline import baseline_from_report, load_baseline, write_baseline
from xlacli.analysis.check import CheckOutcome, check_time_budget, compare
from xlacli.config import load_config
from xlacli.errors import CheckFailed, UsageError
from xlacli.flows.session import capture, configured_target
from xlacli.paths import display_path
from xlacli.render.check import print_check, write_github, write_junit
from xlacli.render.console import print_message
from xlacli.words import counted

T = TypeVar("T")
DEFAULT_STEPS = 5
DEFAULT_WARMUP = 2


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
    module: str | None = None  # -m MODULE
    script_args: tuple[str, ...] = ()  # the script's arguments, after --


def run_check(request: CheckRequest) -> int:
    """Run the check and return its exit code (raises ``XlacliError`` for failures)."""
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
    train = _first(request.train, baseline.train if baseline else None, config.train, False)
    optimizer = _first(
        request.optimizer,
        (baseline.optimizer or None) if baseline else None,
        config.optimizer,
        "sgd",
    )
    result = capture(
        target,
        steps=_first(
            request.steps,
            baseline.steps if baseline else None,
            config.steps,
            None if target.is_script else DEFAULT_STEPS,  # a script: to its end
        ),
        train=train,
        optimizer=optimizer,
        out=request.out,
        force=request.force,
        explain_warmup=_first(
            request.warmup, baseline.warmup if baseline else None, config.warmup, DEFAULT_WARMUP
        ),
        label=f"Checking {target.module or target.path.name}",
    )
    if result.error is not None:
        raise result.error
    current = baseline_from_report(result.report, baseline_path, optimizer)
    if baseline is None:
        write_baseline(current, baseline_path)
        print_message(
            f"Baseline written to {display_path(baseline_path)}: "
            f"{counted(current.compilations, 'compilation')}, "
            f"{counted(current.distinct_graphs, 'graph')}. Commit it."
        )
        return 0
    outcome = compare(baseline, current, request.tolerance)
    if request.time_budget is not None:
        budget = check_time_budget(
            result.report.total_compile_time_s, request.time_budget, request.time_tolerance
        )
        outcome = CheckOutcome((*outcome.results, budget))
    print_check(outcome, result.report, baseline_path, request.output_format)
    if request.junit is not None:
        write_junit(outcome, request.junit, allow_improvements=request.allow_improvements)
    if request.github:
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


def _first(*values: T | None) -> T:
    """The first value that is set: the option, the baseline's, the config's, the default."""
    # The last, the default, may itself be None (a script then runs to its end).
    return cast(T, next((value for value in values if value is not None), values[-1]))
