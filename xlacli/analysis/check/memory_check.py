"""Peak memory in ``xlacli check``: a graph whose peak rose past the tolerance
fails, naming the biggest buffer at its peak that the baseline's peak did not have
(the baseline's side is ``xlacli.analysis.check.memory_baseline``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION, CheckResult
from xlacli.analysis.check.memory_baseline import BufferSummary
from xlacli.units import format_bytes

DEFAULT_MEMORY_TOLERANCE = 0.05


def compare_peaks(
    before: Mapping[str, int],
    after: Mapping[str, int],
    after_buffers: Mapping[str, list[BufferSummary]],
    before_buffers: Mapping[str, list[BufferSummary]],
    tolerance: float,
) -> list[CheckResult]:
    """One check per graph present in both runs; above ``tolerance`` is a regression."""
    results = []
    for key in sorted(set(before) & set(after)):
        old, new = before[key], after[key]
        name = f"peak memory {key}"
        shown = format_bytes(old), format_bytes(new)
        if new > old * (1 + tolerance) and new > old:
            change = f"+{(new - old) / old:.0%}" if old else "new"
            detail = f"{change} (tolerance {tolerance:.0%})"
            buffer = biggest_new_buffer(before_buffers.get(key, []), after_buffers.get(key, []))
            if buffer is not None:
                detail += f"; biggest new buffer: {describe_buffer(buffer)}"
            results.append(CheckResult(name, *shown, REGRESSION, detail))
        elif new < old * (1 - tolerance):
            results.append(CheckResult(name, *shown, IMPROVEMENT, f"-{(old - new) / old:.0%}"))
        else:
            results.append(CheckResult(name, *shown, OK))
    return results


def biggest_new_buffer(
    before: list[BufferSummary], after: list[BufferSummary]
) -> BufferSummary | None:
    """The biggest buffer at the new peak that was not among the old peak's."""
    known = {_signature(buffer) for buffer in before}
    new = [buffer for buffer in after if _signature(buffer) not in known]
    return max(new, key=lambda buffer: buffer.get("bytes", 0), default=None)


def describe_buffer(buffer: BufferSummary) -> str:
    """``f32[8,64,1024] 2.0 MiB (aten__gelu at block.py:41)``."""
    made = " at ".join(part for part in (buffer.get("op"), buffer.get("source")) if part)
    size = format_bytes(buffer.get("bytes", 0))
    return f"{buffer.get('shape', '?')} {size}" + (f" ({made})" if made else "")


def _signature(buffer: BufferSummary) -> tuple[Any, ...]:
    return buffer.get("shape"), buffer.get("op"), buffer.get("source")
