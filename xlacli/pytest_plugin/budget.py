"""Compile budgets of a test, and the message when one is exceeded (no torch).

A budget is read from ``@pytest.mark.xla_compiles(...)`` or given to
``xla_compiles.budget(...)``; it is checked against the ``RunReport`` built
from the test's own dumps, and the compiles over it are written as
``xlacli compile`` writes them (``render/recompiles.py``).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from xlacli.report.run_report import CompileEvent, RunReport, ServedGraph
from xlacli.units import counted

# As xlacli compile's --warmup: the first compile and the cached re-run.
DEFAULT_WARMUP = 2
MESSAGE_WIDTH = 100  # columns of a failure message (pytest prints it as it is)


class BudgetError(ValueError):
    """A marker or ``budget()`` call that asks for nothing, or for nonsense."""


@dataclass(frozen=True)
class Budget:
    """At most ``max`` compiles, exactly ``exact``, or at most ``steady`` after
    the first ``warmup`` steps (a step: a ``torch_xla.sync()`` that ran a graph)."""

    max: int | None = None
    exact: int | None = None
    steady: int | None = None
    warmup: int = DEFAULT_WARMUP

    def __post_init__(self) -> None:
        limits = {"max": self.max, "exact": self.exact, "steady": self.steady}
        given = {name: value for name, value in limits.items() if value is not None}
        if not given:
            raise BudgetError("xla_compiles needs max=N, exact=N or steady=N")
        for name, value in {**given, "warmup": self.warmup}.items():
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise BudgetError(f"xla_compiles {name}={value!r}: expected a whole number >= 0")
        if self.max is not None and self.exact is not None:
            raise BudgetError("xla_compiles takes max= or exact=, not both")

    @classmethod
    def from_marker(cls, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Budget:
        """``xla_compiles(2)``, ``(max=2)``, ``(exact=1)``, ``(steady=0, warmup=1)``.

        Raises:
            BudgetError: unknown arguments or values.
        """
        known = {"max", "exact", "steady", "warmup"}
        unknown = sorted(set(kwargs) - known)
        if unknown or len(args) > 1:
            what = ", ".join(unknown) if unknown else f"{len(args)} positional arguments"
            raise BudgetError(
                f"xla_compiles does not take {what}; it takes {', '.join(sorted(known))}"
            )
        values = dict(kwargs)
        if args:
            if "max" in values:
                raise BudgetError("xla_compiles(N) is max=N: pass one or the other")
            values["max"] = args[0]
        return cls(**values)

    def describe(self) -> str:
        parts = [
            f"{name}={value}"
            for name, value in (("max", self.max), ("exact", self.exact), ("steady", self.steady))
            if value is not None
        ]
        if self.steady is not None:
            parts.append(f"warmup={self.warmup}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Overrun:
    """How a budget was exceeded: a one-line summary and the graphs to explain."""

    summary: str
    extra: tuple[CompileEvent, ...]
    made: tuple[CompileEvent, ...]  # every compile counted (exact= with too few)
    served: tuple[ServedGraph, ...] = ()  # graphs over the budget that a cache served


def check_budget(
    budget: Budget,
    count: int,
    events: Sequence[CompileEvent],
    served: Sequence[ServedGraph] = (),
) -> Overrun | None:
    """The overrun of ``budget`` by ``count`` compiles (explained by ``events``,
    in compile order; empty when explanations are off), or None.

    A budget counts what the code does, not what a cache held: graphs the test
    ran that a cache served (an earlier test compiled them) count as the
    compiles they would have been, so a budget fails alike alone, after other
    tests, or under xdist.
    """
    limit = budget.max if budget.max is not None else budget.exact
    what = f"({budget.describe()})"
    made = count + len(served)
    graphs = _graph_words(made, served)
    if limit is not None and made > limit:
        over_compiled = tuple(events[limit:])
        return Overrun(
            f"{graphs}, over the budget of {limit} {what}",
            over_compiled,
            tuple(events),
            tuple(served[max(0, limit - len(events)) :]),
        )
    if budget.exact is not None and made < budget.exact:
        return Overrun(
            f"{graphs}, expected exactly {budget.exact} {what}", (), tuple(events), tuple(served)
        )
    if budget.steady is not None:
        steady = [event for event in events if event.steady_state]
        steady_served = [graph for graph in served if graph.steady_state]
        changes = len(steady) + len(steady_served)
        if changes > budget.steady:
            kept = max(0, budget.steady - len(steady))
            return Overrun(
                f"{_graph_words(changes, steady_served, steady=True)} after "
                f"{counted(budget.warmup, 'warm-up step')}, over the budget of "
                f"{budget.steady} {what}",
                tuple(steady[budget.steady :]),
                tuple(events),
                tuple(steady_served[kept:]),
            )
    return None


def _graph_words(count: int, served: Sequence[ServedGraph], *, steady: bool = False) -> str:
    """``3 compilations``, or ``3 new graphs (2 compiled, 1 served from a cache)``."""
    if not served:
        return counted(count, "steady-state compilation" if steady else "compilation")
    noun = "steady-state graph change" if steady else "new graph"
    return (
        f"{counted(count, noun)} ({count - len(served)} compiled, "
        f"{len(served)} served from torch_xla's cache, compiled before this test)"
    )


def overrun_message(overrun: Overrun, report: RunReport | None, notes: Sequence[str]) -> str:
    """The failure message: the summary, each extra compile as ``xlacli compile``
    explains it, the timeline of steps, then ``notes`` (the run folder, or why
    there is no explanation)."""
    from rich.console import Group, RenderableType
    from rich.text import Text

    from xlacli.render.recompiles import event_block, served_block, timeline

    parts: list[RenderableType] = [Text(f"xla_compiles: {overrun.summary}")]
    if report is not None and report.step_records:
        parts.append(timeline(report))
    if overrun.extra or overrun.served:
        over = len(overrun.extra) + len(overrun.served)
        noun = "Graphs" if overrun.served else "Compiles"
        parts.append(Text(f"\n{noun} over the budget ({over}):"))
        parts.extend(event_block(event) for event in overrun.extra)
        parts.extend(served_block(graph) for graph in overrun.served)
    elif overrun.made:
        parts.append(Text("\nCompiles made:"))
        parts.extend(event_block(event) for event in overrun.made)
    # Notes are appended as they are: a path wrapped at the width could not be copied.
    return "\n".join([plain_text(Group(*parts)), *notes])


def plain_text(renderable: Any) -> str:
    """A rich renderable as plain text, ``MESSAGE_WIDTH`` columns wide."""
    from rich.console import Console

    buffer = io.StringIO()
    console = Console(
        file=buffer, width=MESSAGE_WIDTH, color_system=None, highlight=False, soft_wrap=False
    )
    console.print(renderable)
    # rich pads indented blocks to the width; a message keeps its lines short.
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip().splitlines())
