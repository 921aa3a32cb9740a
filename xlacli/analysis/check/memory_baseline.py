"""The baseline's memory figures for ``xlacli check``.

Per graph key (``file#n``, as for HLO instructions): the peak in bytes and the
biggest buffers live at it (shape, size, torch op and source line, paths
relative to the project root or to site-packages, so the file reads the
same on every machine), so that a regression can name the buffer that is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from xlacli.analysis.check.stable_paths import stable_location
from xlacli.report.run_report import GraphRecord

BufferSummary = dict[str, Any]  # {"shape", "bytes", "op", "source"}


def memory_baseline(
    keyed_graphs: Iterable[tuple[str, GraphRecord]], folder: Path
) -> tuple[dict[str, int], dict[str, list[BufferSummary]]]:
    """Peak bytes and biggest buffers by graph key, for the baseline file."""
    peaks: dict[str, int] = {}
    buffers: dict[str, list[BufferSummary]] = {}
    for key, graph in keyed_graphs:
        if graph.memory is None:
            continue
        peaks[key] = graph.memory.peak_bytes
        buffers[key] = [
            {
                "shape": buffer.shape,
                "bytes": buffer.bytes,
                "op": buffer.op,
                "source": stable_location(buffer.source, folder),
            }
            for buffer in graph.memory.biggest
        ]
    return peaks, buffers


def buffers_from_json(data: Any) -> dict[str, list[BufferSummary]]:
    """The baseline's ``peak_buffers``, tolerating a missing or odd value."""
    if not isinstance(data, dict):
        return {}
    return {
        str(key): [dict(b) for b in value if isinstance(b, dict)]
        for key, value in data.items()
        if isinstance(value, list)
    }
