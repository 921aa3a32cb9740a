"""The baseline's memory figures for ``xlacli check``.

Per graph key (``file#n``, as for HLO instructions): the peak in bytes and the
biggest buffers live at it (shape, size, torch op and source line, paths
relative to the baseline's folder or to site-packages, so the file reads the
same on every machine), so that a regression can name the buffer that is new.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from xlacli.paths import SITE_PACKAGES, split_location
from xlacli.report.run import GraphRecord

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
                "source": stable_source(buffer.source, folder),
            }
            for buffer in graph.memory.biggest
        ]
    return peaks, buffers


def stable_source(source: str | None, folder: Path) -> str:
    """A source line that reads the same on every machine: a library's from its
    package (``torch/nn/modules/linear.py:134``), the user's relative to ``folder``."""
    if not source:
        return ""
    file, line = split_location(source)
    for marker in SITE_PACKAGES:
        if marker in file:
            file = file.rsplit(marker, 1)[1]
            break
    else:
        if Path(file).is_absolute():
            file = Path(os.path.relpath(file, folder)).as_posix()
    return f"{file}:{line}" if line is not None else file


def buffers_from_json(data: Any) -> dict[str, list[BufferSummary]]:
    """The baseline's ``peak_buffers``, tolerating a missing or odd value."""
    if not isinstance(data, dict):
        return {}
    return {
        str(key): [dict(b) for b in value if isinstance(b, dict)]
        for key, value in data.items()
        if isinstance(value, list)
    }
