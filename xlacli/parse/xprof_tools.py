"""The profile plugin's own converters (``xprof``), used without a UI.

``xprof.convert.raw_to_tool_data`` turns an ``xplane.pb`` into the tables
TensorBoard shows. It logs verbosely to the process's stderr from C++, so
each call runs with file descriptor 2 pointed at a log file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def xprof_available() -> bool:
    """Whether ``tensorboard-plugin-profile`` (``xprof``) is installed."""
    try:
        import xprof.convert.raw_to_tool_data  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def _stderr_to(log: Path) -> Iterator[None]:
    saved = os.dup(2)
    with log.open("ab") as handle:
        os.dup2(handle.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def tool_data(xplane: Path, tool: str, log: Path) -> Any:
    """The JSON a profile tool (``hlo_stats``, ``overview_page``...) makes of an xplane."""
    from xprof.convert import raw_to_tool_data

    with _stderr_to(log):
        data, _ = raw_to_tool_data.xspace_to_tool_data([str(xplane)], tool, {})
    if isinstance(data, bytes):
        data = data.decode("utf-8")
    return json.loads(data) if data else None


def table_rows(table: Any) -> list[dict[str, Any]]:
    """A Google Charts DataTable (``cols``, ``rows``) as a list of dicts by column id."""
    if isinstance(table, list):
        return [row for part in table for row in table_rows(part)]
    if not isinstance(table, dict) or "cols" not in table:
        return []
    ids = [column.get("id") for column in table["cols"]]
    return [
        {
            key: cell.get("v") if isinstance(cell, dict) else None
            for key, cell in zip(ids, row["c"], strict=False)
        }
        for row in table.get("rows", [])
    ]
