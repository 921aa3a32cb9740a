"""The end of a run whose script started its own ranks (``torch.multiprocessing.spawn``,
``xmp.spawn``): each followed process's report, then the ranks merged into
``ranks.json`` as rank 0 of a torchrun run merges them (``run_folder/spawned.py``).

A world of one process (``xmp.spawn`` on one device, as torch_xla's FSDP
examples run) is an ordinary run: its report is the run's ``report.json``,
its files staying in ``rank-0/`` (``alone_report``), and no ranks are merged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.capture.outcome import outcome_error
from xlacli.capture.ranks import rank_folder
from xlacli.capture.runner import ChildOutcome, log_tail
from xlacli.errors import CaptureError, XlacliError
from xlacli.report.ranks import RanksReport, remove_merged, save_ranks
from xlacli.report.run_report import RunReport, save_report
from xlacli.run_folder.events import ChildLog, EventFollower, read_events
from xlacli.run_folder.request import RunPaths
from xlacli.run_folder.spawned import SpawnedProcess

# Builds and saves one folder's report: (its paths, its events, its error).
ReportBuilder = Callable[[RunPaths, ChildLog, "XlacliError | None"], RunReport]


@dataclass(frozen=True)
class SpawnedRun:
    """The ranks a script started, each with its report and error, and merged."""

    merged: RanksReport
    reports: Mapping[int, RunReport]
    errors: Mapping[int, XlacliError | None]
    folder: Path  # the run folder: the ranks' folders and ranks.json

    @property
    def alone(self) -> bool:
        """The script started one process: a world of one, an ordinary run."""
        return self.merged.world_size == 1 and list(self.reports) == [0]

    @property
    def first_error(self) -> XlacliError | None:
        """The first failed rank's error, naming the rank (to raise; each rank's
        report keeps its own message)."""
        for rank, error in self.errors.items():
            if error is not None:
                return type(error)(
                    f"rank {rank}: {error.message}", hint=error.hint, details=error.details
                )
        return None


def report_spawned_ranks(
    root: RunPaths,
    spawned: Mapping[int, SpawnedProcess],
    main: ChildOutcome,
    build: ReportBuilder,
    hang_timeout_s: float | None,
    *,
    compare_steps: bool = True,
) -> SpawnedRun:
    """Build every followed rank's report, merge them into ``ROOT/ranks.json``
    (``compare_steps`` False: no first divergence, as for a profile)."""
    reports: dict[int, RunReport] = {}
    errors: dict[int, XlacliError | None] = {}
    for rank in spawned:
        paths = RunPaths(rank_folder(root.root, rank))
        log = read_events(paths.events)
        errors[rank] = rank_error(rank, log, paths, main)
        reports[rank] = build(paths, log, errors[rank])
    launcher = next(iter(spawned.values())).launcher
    world_size = max(spawned) + 1
    from xlacli.assemble.ranks import merge_ranks  # the analyses: not before the child starts

    merged = merge_ranks(
        root.root, world_size, launcher, hang_timeout_s, compare_steps=compare_steps
    )
    save_ranks(merged, root.root)
    return SpawnedRun(merged, reports, errors, root.root)


def alone_report(root: RunPaths, ranks: SpawnedRun, launcher: str | None = None) -> RunReport:
    """The run's own report when the script started one process (``ranks.alone``):
    that process's, saved as ``ROOT/report.json`` with its files where they are
    (``rank-0/graphs/...``), and no ``ranks.json``: a CI step reading the
    report's ``compilations`` reads it as for any run."""
    from xlacli.assemble.source_snippets import save_snippets

    folder = rank_folder(root.root, 0)
    prefix = folder.relative_to(root.root).as_posix()
    report = ranks.reports[0]
    graphs = tuple(
        dataclasses.replace(
            graph, files={role: f"{prefix}/{path}" for role, path in graph.files.items()}
        )
        for graph in report.graphs
    )
    report = dataclasses.replace(
        report, graphs=graphs, run_dir=str(root.root), launcher=launcher or None
    )
    save_report(report, root.root)
    save_snippets(report, root.root)
    remove_merged(root.root)
    return report


def rank_error(rank: int, log: ChildLog, paths: RunPaths, main: ChildOutcome) -> XlacliError | None:
    """How a followed rank ended: as the main process's outcome says (a hang,
    Ctrl-C), else as its own events do."""
    if log.ended or log.error is not None or main.hung_after_s is not None or main.interrupted:
        outcome = ChildOutcome(0, log, main.interrupted, main.hung_after_s)
        return outcome_error(outcome, paths)
    return CaptureError(
        f"rank {rank}'s process stopped during step {len(log.steps)} before its "
        "function returned (killed, or its main process ended first)",
        details=log_tail(paths) or None,
        hint=f"its output is in {paths.child_log}",
    )


def checked_reports(result: Any) -> list[RunReport]:
    """The reports a capture's budgets and checks judge: each followed rank's,
    else its own. Raises the first rank's error (the main process's comes first).

    Raises:
        XlacliError: a followed rank failed.
    """
    ranks: SpawnedRun | None = result.ranks
    if ranks is None:
        return [result.report]
    if ranks.first_error is not None:
        raise ranks.first_error
    return list(ranks.reports.values())


def reported_folders(result: Any) -> list[tuple[Path, RunReport]]:
    """Each run folder with a report of a capture (or an API ``Run``): the followed
    ranks', else its own."""
    ranks: SpawnedRun | None = result.ranks
    root = Path(result.report.run_dir)
    if ranks is None:
        return [(root, result.report)]
    return [(rank_folder(root, rank), ranks.reports[rank]) for rank in ranks.reports]


def with_rank_zero_progress(
    paths: RunPaths, update: Callable[[ChildLog], None], follow: bool
) -> Callable[[ChildLog], None]:
    """The progress of a script that may start its own ranks (``follow``): once
    rank 0 has started, its steps (the main process only waits for the ranks)."""
    if not follow:
        return update
    rank_zero = EventFollower(RunPaths(rank_folder(paths.root, 0)).events)

    def on_progress(log: ChildLog) -> None:
        followed = rank_zero.poll()
        update(followed if followed.start is not None else log)

    return on_progress
