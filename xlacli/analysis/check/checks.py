"""Compare a run with its baseline: one check per deterministic count."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from xlacli.analysis.check.baseline import Baseline
from xlacli.analysis.check.line_growth import LineChange, grown_summary, line_changes

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
    # The run's graphs the baseline does not have (analysis/check/graph_match.py): their
    # compiles are explained with the steady-state ones.
    new_graph_hashes: tuple[str, ...] = ()

    @property
    def regressions(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == REGRESSION)

    @property
    def improvements(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.status == IMPROVEMENT)


def compare(baseline: Baseline, current: Baseline, tolerance: float = 0.0) -> CheckOutcome:
    """Check ``current`` against ``baseline``.

    A count above the baseline by more than ``tolerance`` (a fraction) is a
    regression; below it by more than ``tolerance``, an improvement. Per-graph
    counts compare graphs under the same key: ``current``'s graphs renamed to
    the baseline's (``graph_match.renamed_baseline``) first.
    """
    results = [
        _count("compilations", baseline.compilations, current.compilations, tolerance),
        _count("distinct graphs", baseline.distinct_graphs, current.distinct_graphs, tolerance),
        _count(
            "steady-state graph changes",
            baseline.steady_state_compiles,
            current.steady_state_compiles,
            tolerance,
        ),
        _executions(baseline.executions_per_step, current.executions_per_step),
    ]
    results += _dynamo_counts(baseline, current, tolerance)
    results += _mapping("fallback op", baseline.fallback_ops, current.fallback_ops, tolerance)
    results += _with_grown_lines(
        _mapping("HLO instructions", baseline.graphs, current.graphs, tolerance, "graph"),
        grown_summary(_line_changes(baseline, current)),
    )
    results += _mapping("collectives", baseline.collectives, current.collectives, tolerance)
    return CheckOutcome(tuple(results))


def _line_changes(baseline: Baseline, current: Baseline) -> list[LineChange]:
    """Lines by content when both sides keep their texts, else by location."""
    both = bool(baseline.line_sources and current.line_sources)
    return line_changes(
        baseline.lines,
        current.lines,
        baseline.line_sources if both else None,
        current.line_sources if both else None,
    )


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
        return CheckResult(name, *shown, REGRESSION, _step_changes(before, after, more))
    if fewer:
        return CheckResult(name, *shown, IMPROVEMENT, _step_changes(before, after, fewer))
    return CheckResult(name, *shown, OK)


def _step_changes(before: tuple[int, ...], after: tuple[int, ...], steps: list[int]) -> str:
    """``steps 0-7, 12-19: 1 -> 2``: the steps that changed alike, in ranges."""
    changes: dict[tuple[int, int], list[int]] = {}
    for step in steps:
        changes.setdefault((before[step], after[step]), []).append(step)
    return "; ".join(
        f"{'step' if len(found) == 1 else 'steps'} {_ranges(found)}: {old} -> {new}"
        for (old, new), found in changes.items()
    )


def _ranges(steps: list[int]) -> str:
    """``0-7, 12-19`` for sorted step numbers."""
    spans: list[list[int]] = []
    for step in steps:
        if spans and step == spans[-1][1] + 1:
            spans[-1][1] = step
        else:
            spans.append([step, step])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _mapping(
    kind: str, before: dict[str, int], after: dict[str, int], tolerance: float, noun: str = ""
) -> Iterable[CheckResult]:
    for key in sorted(set(before) | set(after)):
        name = f"{kind} {key}"
        if key not in before:
            yield CheckResult(name, "-", str(after[key]), REGRESSION, f"new {noun}".rstrip())
        elif key not in after:
            yield CheckResult(name, str(before[key]), "-", IMPROVEMENT, f"{noun} gone".lstrip())
        else:
            yield _count(name, before[key], after[key], tolerance)


def _with_grown_lines(results: Iterable[CheckResult], grown: str) -> list[CheckResult]:
    """The first graph that grew names the lines that grew most (the baseline's
    ``lines`` are summed over graphs: said once, not under every graph)."""
    shown: list[CheckResult] = []
    for result in results:
        if grown and result.status == REGRESSION:
            result = replace(result, detail=f"{result.detail}; lines grew: {grown}")
            grown = ""
        shown.append(result)
    return shown


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
