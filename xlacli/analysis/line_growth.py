"""Which source lines' compile cost grew between two runs (``diff-hlo RUN RUN``)
or between a baseline and a run (``check``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xlacli.report.run import RunReport

DATA_LINE = "(data)"  # parameters, inputs and constants: no line's work


@dataclass(frozen=True)
class LineChange:
    """One line's HLO instructions (before optimization) in two runs; 0: absent."""

    location: str
    before: int
    after: int

    @property
    def growth(self) -> int:
        return self.after - self.before


def line_instructions(report: RunReport) -> dict[str, int]:
    """HLO instructions per line, summed over the run's graphs."""
    cost = report.compile_cost
    return {
        line.location or DATA_LINE: line.hlo_instructions for line in (cost.lines if cost else ())
    }


def line_changes(before: Mapping[str, int], after: Mapping[str, int]) -> list[LineChange]:
    """Lines whose instruction count changed, the most grown first."""
    changes = [
        LineChange(location, before.get(location, 0), after.get(location, 0))
        for location in set(before) | set(after)
        if before.get(location, 0) != after.get(location, 0)
    ]
    return sorted(changes, key=lambda change: (-change.growth, change.location))


def grown_summary(changes: list[LineChange], top: int = 3) -> str:
    """``model.py:35 +120, model.py:12 new (+40)`` for the lines that grew most."""
    grown = [change for change in changes if change.growth > 0][:top]
    return ", ".join(
        f"{change.location} {'new ' if change.before == 0 else ''}(+{change.growth})"
        for change in grown
    )
