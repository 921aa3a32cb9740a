"""Straggling ranks (``profile`` under a launcher): each rank's step time side by
side, and the slowest rank's extra time per step by kind of work.

On hardware, ranks that wait for each other in a collective all run at the
slowest one's pace; what the slowest rank spends more than the others on
(compiling, tracing, waiting for the device, its own Python, which holds a
``torch.distributed`` collective's wait) is why.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping

from xlacli.report.profile import ProfileSummary
from xlacli.report.ranks import RankStepTime, Stragglers

# The rows, from the profile's breakdown (seconds in the profiled window).
ROWS = {
    "compile": ("compile_s",),
    "device": ("execute_s",),
    "transfers": ("host_to_device_s", "device_to_host_s"),
    "tracing": ("tracing_s",),
    "python and waits": ("python_s",),
}


def find_stragglers(summaries: Mapping[int, ProfileSummary]) -> Stragglers | None:
    """None with fewer than two ranks that profiled a step."""
    times = {
        rank: _step_time(rank, summary)
        for rank, summary in summaries.items()
        if summary.step_time_s is not None and summary.steps
    }
    if len(times) < 2:
        return None
    slowest = max(times.values(), key=lambda t: (t.p50_s, -t.rank))
    others = [t for t in times.values() if t.rank != slowest.rank]
    extra = {
        row: slowest.per_step_s[row] - statistics.median(t.per_step_s[row] for t in others)
        for row in ROWS
    }
    return Stragglers(
        ranks=tuple(times[rank] for rank in sorted(times)),
        slowest=slowest.rank,
        extra_s=slowest.p50_s - statistics.median(t.p50_s for t in others),
        extra_by_row_s=extra,
    )


def _step_time(rank: int, summary: ProfileSummary) -> RankStepTime:
    assert summary.step_time_s is not None
    per_step = {
        row: sum(summary.breakdown.get(key, 0.0) for key in keys) / summary.steps
        for row, keys in ROWS.items()
    }
    return RankStepTime(
        rank, summary.steps, summary.step_time_s.p50, summary.step_time_s.mean, per_step
    )
