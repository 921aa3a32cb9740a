"""Waiting for the other ranks through the shared run folder (no network:
the ranks may be on other hosts; a shared file system is all they share)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from xlacli.capture.ranks import rank_folder
from xlacli.report.ranks import MERGED_FILE
from xlacli.report.run_report import REPORT_FILE

_POLL_S = 0.25


def report_saved(folder: Path) -> bool:
    return (folder / REPORT_FILE).exists()


def wait_for_reports(
    out: Path, world_size: int, timeout_s: float, done: Callable[[Path], bool] = report_saved
) -> tuple[int, ...]:
    """Wait until every rank is ``done`` (default: has saved its report); returns
    the ranks still missing when ``timeout_s`` runs out (empty: all there)."""
    deadline = time.monotonic() + timeout_s
    while True:
        missing = tuple(rank for rank in range(world_size) if not done(rank_folder(out, rank)))
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(_POLL_S)


def wait_for_merged(out: Path, timeout_s: float) -> bool:
    """Wait for rank 0's merged report; False when ``timeout_s`` ran out."""
    deadline = time.monotonic() + timeout_s
    while not (out / MERGED_FILE).exists():
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True
