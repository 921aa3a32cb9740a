"""Compile budgets: what a marker asks for, when it is exceeded, and the message."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_render_recompiles import event
from xlacli.pytest_plugin.budget import Budget, BudgetError, check_budget, overrun_message
from xlacli.report.run_report import CompileEvent


def _event(step: int, category: str, *, steady: bool, line: int = 12) -> CompileEvent:
    shown = event(
        step,
        category,
        f"/nowhere/test_model.py:{line}",
        detail="input 0 shape f32[12,16] -> f32[6,16]",
        hint="pad or bucket input shapes",
    )
    return dataclasses.replace(shown, steady_state=steady)


EVENTS = (
    _event(0, "first_compile", steady=False),
    _event(1, "input_shape", steady=False),
    _event(3, "input_shape", steady=True, line=30),
)


@pytest.mark.parametrize(
    ("args", "kwargs", "expected"),
    [
        ((2,), {}, Budget(max=2)),
        ((), {"max": 0}, Budget(max=0)),
        ((), {"exact": 1}, Budget(exact=1)),
        ((), {"steady": 0, "warmup": 1}, Budget(steady=0, warmup=1)),
        ((), {"max": 3, "steady": 0}, Budget(max=3, steady=0)),
    ],
)
def test_marker_arguments(args: tuple, kwargs: dict, expected: Budget) -> None:
    assert Budget.from_marker(args, kwargs) == expected


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        ((), {}, "needs max=N, exact=N or steady=N"),
        ((), {"maximum": 1}, "does not take maximum"),
        ((1, 2), {}, "does not take 2 positional arguments"),
        ((1,), {"max": 1}, "is max=N"),
        ((), {"max": -1}, "max=-1: expected a whole number"),
        ((), {"max": True}, "max=True"),
        ((), {"max": 1, "exact": 1}, "not both"),
        ((), {"steady": 0, "warmup": 1.5}, "warmup=1.5"),
    ],
)
def test_bad_markers_say_what_is_wrong(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(BudgetError, match=message):
        Budget.from_marker(args, kwargs)


def test_within_budgets() -> None:
    assert check_budget(Budget(max=3), 3, EVENTS) is None
    assert check_budget(Budget(exact=3), 3, EVENTS) is None
    assert check_budget(Budget(steady=1, warmup=2), 3, EVENTS) is None


def test_max_explains_the_compiles_past_the_budget() -> None:
    overrun = check_budget(Budget(max=1), 3, EVENTS)
    assert overrun is not None
    assert overrun.summary == "3 compilations, over the budget of 1 (max=1)"
    assert overrun.extra == EVENTS[1:]


def test_exact_with_too_few_lists_what_was_made() -> None:
    overrun = check_budget(Budget(exact=4), 3, EVENTS)
    assert overrun is not None
    assert overrun.summary == "3 compilations, expected exactly 4 (exact=4)"
    assert overrun.extra == ()
    assert overrun.made == EVENTS


def test_steady_counts_only_steady_state_compiles() -> None:
    overrun = check_budget(Budget(steady=0, warmup=2), 3, EVENTS)
    assert overrun is not None
    assert overrun.summary.startswith("1 steady-state compilation after 2 warm-up steps")
    assert overrun.extra == (EVENTS[2],)


def test_counts_without_explanations_still_fail() -> None:
    overrun = check_budget(Budget(max=0), 2, ())
    assert overrun is not None and overrun.extra == ()


def test_message_is_the_compile_block_in_plain_text() -> None:
    overrun = check_budget(Budget(max=2), 3, EVENTS)
    assert overrun is not None
    message = overrun_message(overrun, None, ["", "The dumps: /a/very/long/" + "x" * 120])
    lines = message.splitlines()
    assert lines[0] == "xla_compiles: 3 compilations, over the budget of 2 (max=2)"
    assert "step 3  input_shape  /nowhere/test_model.py:30" in message
    assert "input 0 shape f32[12,16] -> f32[6,16]" in message
    assert "fix: pad or bucket input shapes" in message
    assert "\x1b[" not in message  # no colour codes in a pytest failure
    assert lines[-1] == "The dumps: /a/very/long/" + "x" * 120  # never wrapped
    assert all(line == line.rstrip() for line in lines)
