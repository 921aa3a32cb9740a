"""Which source lines' compile cost grew between two runs (``diff-hlo RUN RUN``)
or between a baseline and a run (``check``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from xlacli.paths import split_location
from xlacli.report.run_report import RunReport

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


def line_changes(
    before: Mapping[str, int],
    after: Mapping[str, int],
    before_sources: Mapping[str, str] | None = None,
    after_sources: Mapping[str, str] | None = None,
) -> list[LineChange]:
    """Lines whose instruction count changed, the most grown first.

    With each side's line texts (``file:line`` -> text), a line is known by its
    file and text (and which of the file's equal lines it is), not its number:
    code that moved down ten lines is the same code. Shown at its line now.
    """
    old = _by_content(before, before_sources)
    new = _by_content(after, after_sources)
    changes = [
        LineChange(
            (new.get(identity) or old[identity])[0],
            old.get(identity, ("", 0))[1],
            new.get(identity, ("", 0))[1],
        )
        for identity in old.keys() | new.keys()
        if old.get(identity, ("", 0))[1] != new.get(identity, ("", 0))[1]
    ]
    return sorted(changes, key=lambda change: (-change.growth, change.location))


def _by_content(
    counts: Mapping[str, int], sources: Mapping[str, str] | None
) -> dict[tuple[str, ...], tuple[str, int]]:
    """Each line's identity -> (its ``file:line``, its count). Without its text a
    line is its location; with it, its file, text and rank among equal lines."""
    if not sources:
        return {(location,): (location, count) for location, count in counts.items()}
    keyed: dict[tuple[str, ...], tuple[str, int]] = {}
    ranks: dict[tuple[str, str], int] = {}
    for location in sorted(counts, key=_file_and_number):
        text = sources.get(location)
        if text is None:
            keyed[(location,)] = (location, counts[location])
            continue
        file = split_location(location)[0]
        rank = ranks.get((file, text), 0)
        ranks[(file, text)] = rank + 1
        keyed[(file, text, str(rank))] = (location, counts[location])
    return keyed


def _file_and_number(location: str) -> tuple[str, int]:
    file, line = split_location(location)
    return file, line or 0


def grown_summary(changes: list[LineChange], top: int = 3) -> str:
    """``model.py:35 +120, model.py:12 new (+40)`` for the lines that grew most."""
    grown = [change for change in changes if change.growth > 0][:top]
    return ", ".join(
        f"{change.location} {'new ' if change.before == 0 else ''}(+{change.growth})"
        for change in grown
    )
