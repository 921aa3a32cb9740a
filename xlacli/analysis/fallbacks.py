"""Ops that ran on the CPU, with the user's line that needed them.

torch_xla counts CPU fallbacks per op (``aten::*`` counters) but not where
they happen. A fallback needs its inputs' values, so it makes torch_xla run
the graph so far: a value-read sync, whose frames name the user's line. The
fallback's line is the value read of a step in which it ran; where several
lines qualify, the one whose source names the op.

Value reads (``.item()``, ``bool(t)``...) are counted where they happen, by
the child (``child/value_reads.py``): one ``FallbackOp`` per call site (op,
user line, library line), so a ``loss.item()`` in a step closure, a mesh
reduction and a final read are three rows, not one count pinned to one line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from xlacli.report.run_report import FallbackOp

# (step, op, user file:line, library file:line, count) of a call site the child counted
FallbackSite = tuple[int | None, str, str | None, str | None, int]


def locate_fallbacks(
    counts_by_step: Mapping[int | None, Mapping[str, int]],
    value_reads: Sequence[tuple[int | None, str]],
    source_of: Callable[[str], str | None],
    sites: Sequence[FallbackSite] = (),
) -> tuple[FallbackOp, ...]:
    """One ``FallbackOp`` per counted call site, then per op for the rest,
    most frequent first.

    Args:
        counts_by_step: step -> {``aten::op``: times it ran on the CPU in that step}.
        value_reads: (step, user ``file:line``) of every value-read sync, in order.
        source_of: the source text of a ``file:line``, for choosing among lines.
        sites: the fallbacks the child counted at their call sites.
    """
    located: Counter[tuple[str, str | None, str | None]] = Counter()
    counted_in: Counter[tuple[int | None, str]] = Counter()
    for step, op, user, library, count in sites:
        located[op, user, library] += count
        counted_in[step, op] += count
    totals: dict[str, int] = {}
    candidates: dict[str, list[str]] = {}
    for step, counts in counts_by_step.items():
        lines = [location for read_step, location in value_reads if read_step == step]
        for op, count in counts.items():
            rest = count - counted_in[step, op]
            if rest <= 0:
                continue
            totals[op] = totals.get(op, 0) + rest
            for line in lines:
                if line not in candidates.setdefault(op, []):
                    candidates[op].append(line)
    found = [FallbackOp(op, n, user, library) for (op, user, library), n in located.items()]
    found += [
        FallbackOp(op, count, _best_line(op, candidates.get(op, []), source_of))
        for op, count in totals.items()
    ]
    return tuple(sorted(found, key=lambda f: (-f.count, f.op, f.location or "")))


def _best_line(op: str, lines: list[str], source_of: Callable[[str], str | None]) -> str | None:
    if len(lines) <= 1:
        return lines[0] if lines else None
    name = op.removeprefix("aten::").strip("_")
    named = [line for line in lines if name in (source_of(line) or "")]
    return (named or lines)[0]
