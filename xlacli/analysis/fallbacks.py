"""Ops that ran on the CPU, with the user's line that needed them.

torch_xla counts CPU fallbacks per op (``aten::*`` counters) but not where
they happen. A fallback needs its inputs' values, so it makes torch_xla run
the graph so far: a value-read sync, whose frames name the user's line. The
fallback's line is the value read of a step in which it ran; where several
lines qualify, the one whose source names the op.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from xlacli.report.run import FallbackOp


def locate_fallbacks(
    counts_by_step: Mapping[int | None, Mapping[str, int]],
    value_reads: Sequence[tuple[int | None, str]],
    source_of: Callable[[str], str | None],
) -> tuple[FallbackOp, ...]:
    """One ``FallbackOp`` per op, most frequent first.

    Args:
        counts_by_step: step -> {``aten::op``: times it ran on the CPU in that step}.
        value_reads: (step, user ``file:line``) of every value-read sync, in order.
        source_of: the source text of a ``file:line``, for choosing among lines.
    """
    totals: dict[str, int] = {}
    candidates: dict[str, list[str]] = {}
    for step, counts in counts_by_step.items():
        lines = [location for read_step, location in value_reads if read_step == step]
        for op, count in counts.items():
            totals[op] = totals.get(op, 0) + count
            for line in lines:
                if line not in candidates.setdefault(op, []):
                    candidates[op].append(line)
    return tuple(
        FallbackOp(op, count, _best_line(op, candidates.get(op, []), source_of))
        for op, count in sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    )


def _best_line(op: str, lines: list[str], source_of: Callable[[str], str | None]) -> str | None:
    if len(lines) <= 1:
        return lines[0] if lines else None
    name = op.removeprefix("aten::").strip("_")
    named = [line for line in lines if name in (source_of(line) or "")]
    return (named or lines)[0]
