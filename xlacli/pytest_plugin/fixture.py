"""The ``xla_compiles`` fixture: budgets around parts of a test, and what was compiled."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pytest

from xlacli.pytest_plugin.budget import DEFAULT_WARMUP, Budget, BudgetError

if TYPE_CHECKING:
    from xlacli.pytest_plugin import PluginState
    from xlacli.pytest_plugin.measure import TestMeasure
    from xlacli.report.run_report import CompileEvent, GraphRecord, RunReport


@dataclass
class BudgetBlock:
    """One ``with xla_compiles.budget(...)`` block; ``count`` is set when it ends."""

    budget: Budget
    first: int  # the test's compiles before the block
    first_step: int = 0  # the test's steps before the block
    count: int = 0


class XlaCompiles:
    """What the test compiled so far, and budgets around parts of it.

    A step is a ``torch_xla.sync()`` (or ``xm.mark_step()``) that ran a graph,
    as for a script under ``xlacli compile``; compiles after the last one
    (a value read) belong to one more step.
    """

    def __init__(self, item: pytest.Item, state: PluginState):
        self._item = item
        self._state = state

    @property
    def _measure(self) -> TestMeasure:
        from xlacli.pytest_plugin import MEASURE

        return self._item.stash[MEASURE]

    @property
    def count(self) -> int:
        """Compilations since the test started."""
        return self._measure.compiles

    @contextlib.contextmanager
    def budget(
        self,
        max: int | None = None,
        *,
        exact: int | None = None,
        steady: int | None = None,
        warmup: int = DEFAULT_WARMUP,
    ) -> Iterator[BudgetBlock]:
        """Fail the test when the block compiles more than ``max`` graphs
        (or not ``exact`` ones; or more than ``steady`` after ``warmup`` of
        the test's steps), with xlacli's explanation of each extra compile.
        """
        try:
            budget = Budget(max, exact, steady, warmup)
        except BudgetError as error:
            bad: str | None = str(error)
        else:
            bad = None
        if bad is not None:
            pytest.fail(bad, pytrace=False)
        block = BudgetBlock(budget, self.count, self._measure.steps_done)
        yield block
        block.count = self.count - block.first
        message = self._measure.check(
            block.budget, self._state.runs_dir, first=block.first, first_step=block.first_step
        )
        if message is not None:
            pytest.fail(message, pytrace=False)

    def report(self, warmup: int = DEFAULT_WARMUP) -> RunReport:
        """The test's report so far, as ``xlacli compile`` builds it.

        Raises:
            RuntimeError: torch_xla was imported before the debug switches were set.
        """
        report = self._measure.report(warmup)
        if report is None:
            raise RuntimeError(self._state.too_late or "xla_compiles: no report")
        return report

    @property
    def graphs(self) -> tuple[GraphRecord, ...]:
        """Each distinct graph compiled so far."""
        return self.report().graphs

    @property
    def events(self) -> tuple[CompileEvent, ...]:
        """Each compile so far, explained (category, line, fix)."""
        return self.report().events

    def explain(self, warmup: int = DEFAULT_WARMUP) -> str:
        """The compiles so far as ``xlacli compile`` explains them, as plain text."""
        from xlacli.pytest_plugin.budget import plain_text
        from xlacli.render.recompiles import recompile_view

        return plain_text(recompile_view(self.report(warmup)))
