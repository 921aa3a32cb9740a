"""The end of a launched rank's run: rank 0 waits for the others and merges;
the others hand over to it (see ``assemble/ranks.py``)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from xlacli.assemble.ranks import merge_ranks, world_size_of
from xlacli.capture.rank_wait import report_saved, wait_for_merged, wait_for_reports
from xlacli.capture.ranks import RankPlace, rank_folders, rank_place
from xlacli.errors import CheckFailed, UsageError
from xlacli.paths import display_path
from xlacli.render.console import print_message
from xlacli.render.ranks import RanksView
from xlacli.render.view import show
from xlacli.report.check import CHECK_FILE
from xlacli.report.profile import PROFILE_FILE
from xlacli.report.ranks import RanksReport, load_ranks, save_ranks

if TYPE_CHECKING:
    from xlacli.flows.spawned import SpawnedRun

DEFAULT_RANKS_TIMEOUT_S = 300.0


def launched_rank() -> RankPlace | None:
    """This process's rank under a launcher, or None (the single-process path)."""
    return rank_place(os.environ)


@dataclass(frozen=True)
class MergedRanks:
    """The processes a run was one of, merged, however they were launched."""

    merged: RanksReport | None  # None: another rank's process prints them
    folder: Path  # the run folder holding each rank's folder and ranks.json


def merge_processes(
    run_dir: Path,
    spawned: SpawnedRun | None,
    *,
    failed: bool,
    timeout_s: float = DEFAULT_RANKS_TIMEOUT_S,
    hang_timeout_s: float | None = None,
    done: Callable[[Path], bool] = report_saved,
    compare_steps: bool = True,
) -> MergedRanks | None:
    """The one merge stage after a run: None for one process; the ranks a script
    started (``spawned``), which the capture merged; or, under a launcher, every
    rank's folder under ``run_dir``'s parent: rank 0 waits up to ``timeout_s``
    for every rank's report (``done``), merges and saves them; another rank says
    where its report is and, when it failed, waits for the merge first."""
    if spawned is not None:
        return MergedRanks(spawned.merged, spawned.folder)
    place = launched_rank()
    if place is None:
        return None
    out = run_dir.parent
    if not place.is_merger:
        print_message(
            f"rank {place.rank}: report in {display_path(out)}/rank-{place.rank}; "
            "rank 0 prints the merged report"
        )
        if failed:  # a launcher stops every rank once one exits with an error
            wait_for_merged(out, timeout_s)
        return MergedRanks(None, out)
    missing = wait_for_reports(out, place.world_size, timeout_s, done)
    if missing:
        print_message(
            f"[yellow]warning:[/] rank {', '.join(map(str, missing))} had not finished "
            f"after {timeout_s:g} s: merging the ranks that did"
        )
    merged = merge_ranks(
        out, place.world_size, place.launcher, hang_timeout_s, compare_steps=compare_steps
    )
    save_ranks(merged, out)
    return MergedRanks(merged, out)


def check_finished(folder: Path) -> bool:
    """A rank of ``check`` is done when its check is saved, or its run failed."""
    return _saved_or_failed(folder, CHECK_FILE)


def profile_finished(folder: Path) -> bool:
    """A rank of ``profile`` is done when its summary is saved, or its run failed."""
    return _saved_or_failed(folder, PROFILE_FILE)


def _saved_or_failed(folder: Path, name: str) -> bool:
    if (folder / name).exists():
        return True
    try:
        report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return report.get("error") is not None


def check_ranks(merged: RanksReport, out: Path) -> None:
    """``check`` across ranks: fail when they diverge, a rank is missing, or any
    rank's own check failed.

    Raises:
        CheckFailed: naming each reason.
    """
    reasons = []
    if merged.divergence is not None:
        reasons.append(f"the ranks diverge at {merged.divergence.summary}")
    if merged.missing:
        reasons.append(f"rank {', '.join(map(str, merged.missing))} never finished")
    for rank in merged.ranks:
        reason = _rank_check_failure(out / rank.run_dir, rank.error)
        if reason:
            reasons.append(f"rank {rank.rank}: {reason}")
    if reasons:
        raise CheckFailed("; ".join(reasons))


def _rank_check_failure(folder: Path, error: str | None) -> str | None:
    if error is not None:
        return error
    try:
        check = json.loads((folder / CHECK_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None  # rank 0's own check is judged by its own verdict
    regressions = check.get("regressions", 0)
    return f"{regressions} check(s) regressed against the baseline" if regressions else None


def is_merged_run(folder: Path) -> bool:
    """A launched run's folder: rank folders, and no report of its own."""
    return folder.is_dir() and not (folder / "report.json").exists() and bool(rank_folders(folder))


def show_merged_run(out: Path, output_format: str) -> RanksReport:
    """Merge a launched run's rank folders again (the first divergence with this
    xlacli's analysis) and print it; ``ranks.json`` keeps the world size."""
    try:
        previous = load_ranks(out)
    except UsageError:
        previous = RanksReport(world_size_of(out), "unknown", (), (), None)
    merged = merge_ranks(
        out,
        previous.world_size,
        previous.launcher,
        previous.hang_timeout_s,
        compare_steps=previous.divergence_checked,
    )
    show(RanksView(merged, out), output_format)
    return merged


def check_done(updating: bool) -> Callable[[Path], bool]:
    """When a rank of ``check`` is done: its report saved (updating the baseline), else
    its check."""
    return report_saved if updating else check_finished
