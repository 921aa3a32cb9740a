"""Compare a run with its baseline: one check per deterministic count."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from xlacli.analysis.baseline import Baseline
from xlacli.analysis.line_growth import grown_summary, line_changes

OK, REGRESSION, IMPROVEMENT = "ok", "regression", "improvement"


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, the two values, and what the difference means."""

    name: str
    baseline: str
    current: str
    status: str  # "ok", "regression" or "improvement"
    detail: str = ""


@dataclass(frozen=True)
class CheckOutcome:
    """All checks of a run."""

    results: tuple[CheckResult, ...]

    @property
    def regressions(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == REGRESSION)

    @property
    def improvements(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == IMPROVEMENT)


def compare(baseline: Baseline, current: Baseline, tolerance: float = 0.0) -> CheckOutcome:
    """Check ``current`` against ``baseline``.

    A count above the baseline by more than ``tolerance`` (a fraction) is a
    regression; below it by more than ``tolerance``, an improvement.
    """
    results = [
        _count("compilations", baseline.compilations, current.compilations, tolerance),
        _count("distinct graphs", baseline.distinct_graphs, current.distinct_graphs, tolerance),
        _count(
            "steady-state compiles",
            baseline.steady_state_compiles,
            current.steady_state_compiles,
            tolerance,
        ),
        _executions(baseline.executions_per_step, current.executions_per_step),
    ]
    results += _dynamo_counts(baseline, current, tolerance)
    results += _mapping("fallback op", baseline.fallback_ops, current.fallback_ops, tolerance)
    results += _with_grown_lines(
        _mapping("HLO instructions", baseline.graphs, current.graphs, tolerance),
        grown_summary(line_changes(baseline.lines, current.lines)),
    )
    results += _mapping("collectives", baseline.collectives, current.collectives, tolerance)
    return CheckOutcome(tuple(results))


def check_time_budget(
    total_compile_time_s: float, budget_s: float, tolerance: float
) -> CheckResult:
    """Total compile time against an explicit budget (only when asked: CI is noisy)."""
    limit = budget_s * (1 + tolerance)
    status = REGRESSION if total_compile_time_s > limit else OK
    return CheckResult(
        "compile time",
        f"{budget_s:.2f} s (+{tolerance:.0%})",
        f"{total_compile_time_s:.2f} s",
        status,
        f"over the budget of {limit:.2f} s" if status == REGRESSION else "",
    )


def _status(before: float, after: float, tolerance: float) -> str:
    if after > before * (1 + tolerance) and after > before:
        return REGRESSION
    if after < before * (1 - tolerance) and after < before:
        return IMPROVEMENT
    return OK


def _count(name: str, before: int, after: int, tolerance: float) -> CheckResult:
    status = _status(before, after, tolerance)
    detail = "" if status == OK else f"{before} -> {after}"
    return CheckResult(name, str(before), str(after), status, detail)


def _executions(before: tuple[int, ...], after: tuple[int, ...]) -> CheckResult:
    """Graphs run per step: more in any step is a value read that cut it."""
    name = "executions per step"
    shown = " ".join(map(str, before)), " ".join(map(str, after))
    if len(before) != len(after):
        return CheckResult(name, *shown, REGRESSION, f"{len(before)} steps -> {len(after)} steps")
    more = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a > b]
    fewer = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a < b]
    if more:
        steps = ", ".join(f"step {i}: {before[i]} -> {after[i]}" for i in more)
        return CheckResult(name, *shown, REGRESSION, steps)
    if fewer:
        steps = ", ".join(f"step {i}: {before[i]} -> {after[i]}" for i in fewer)
        return CheckResult(name, *shown, IMPROVEMENT, steps)
    return CheckResult(name, *shown, OK)


def _mapping(
    kind: str, before: dict[str, int], after: dict[str, int], tolerance: float
) -> Iterable[CheckResult]:
    for key in sorted(set(before) | set(after)):
        name = f"{kind} {key}"
        if key not in before:
            yield CheckResult(name, "-", str(after[key]), REGRESSION, "new")
        elif key not in after:
            yield CheckResult(name, str(before[key]), "-", IMPROVEMENT, "gone")
        else:
            yield _count(name, before[key], after[key], tolerance)


def _with_grown_lines(results: Iterable[CheckResult], grown: str) -> list[CheckResult]:
    """A graph that grew names the lines that grew most (from the baseline's ``lines``)."""
    return [
        replace(result, detail=f"{result.detail}; lines grew: {grown}")
        if grown and result.status == REGRESSION
        else result
        for result in results
    ]


def _dynamo_counts(baseline: Baseline, current: Baseline, tolerance: float) -> list[CheckResult]:
    """Graph breaks and Dynamo recompiles, once either run used torch.compile
    (a lazy model without them keeps its checks as they were)."""
    pairs = (
        ("graph breaks", baseline.graph_breaks, current.graph_breaks),
        ("Dynamo recompiles", baseline.dynamo_recompiles, current.dynamo_recompiles),
    )
    if baseline.mode == "lazy" and not any(b or c for _, b, c in pairs):
        return []
    return [_count(name, before, after, tolerance) for name, before, after in pairs]
