"""The end of a launched rank's run: rank 0 waits for the others and merges;
the others hand over to it (see ``xlacli.ranks``)."""

from __future__ import annotations

import os
from pathlib import Path

from xlacli.capture.ranks import RankPlace, rank_place
from xlacli.paths import display_path
from xlacli.ranks.merge import merge_ranks
from xlacli.ranks.model import RanksReport, save_ranks
from xlacli.ranks.wait import wait_for_merged, wait_for_reports
from xlacli.render.console import print_message
from xlacli.render.ranks import render_ranks

DEFAULT_RANKS_TIMEOUT_S = 300.0


def launched_rank() -> RankPlace | None:
    """This process's rank under a launcher, or None (the single-process path)."""
    return rank_place(os.environ)


def finish_rank(
    place: RankPlace,
    out: Path,
    *,
    failed: bool,
    output_format: str,
    timeout_s: float = DEFAULT_RANKS_TIMEOUT_S,
    hang_timeout_s: float | None = None,
) -> RanksReport | None:
    """Rank 0: wait up to ``timeout_s`` for every rank's report, merge, save and
    print. Another rank: say where its report is; when it failed, wait for the
    merge first, since a launcher stops every rank once one exits with an error.
    """
    if not place.is_merger:
        print_message(
            f"rank {place.rank}: report in {display_path(out)}/rank-{place.rank}; "
            "rank 0 prints the merged report"
        )
        if failed:
            wait_for_merged(out, timeout_s)
        return None
    missing = wait_for_reports(out, place.world_size, timeout_s)
    if missing:
        print_message(
            f"[yellow]warning:[/] rank {', '.join(map(str, missing))} had not finished "
            f"after {timeout_s:g} s: merging the ranks that did"
        )
    merged = merge_ranks(out, place.world_size, place.launcher, hang_timeout_s)
    save_ranks(merged, out)
    render_ranks(merged, out, output_format)
    return merged
