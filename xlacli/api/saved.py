"""Saved runs from Python: reports, profiles, the runs folder, HLO diffs.

Nothing here runs a model or needs a device: it reads run folders (and HLO
files or XLA dumps) as ``xlacli report``, ``runs`` and ``diff-hlo`` do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from xlacli.flows.run_diff import RunFolderDiff
    from xlacli.flows.saved_runs import RunEntry
    from xlacli.hlo.changes import DiffReport
    from xlacli.report.profile import ProfileSummary
    from xlacli.report.run_report import RunReport

StrPath = str | os.PathLike[str]


def load_report(run_dir: StrPath) -> RunReport:
    """The report saved in a run folder (``RUN/report.json``), as ``xlacli report`` reads it.

    A run whose report was never written (xlacli was killed) gets one rebuilt
    from its raw files first, and saved.

    Raises:
        UsageError: no report there, or one of another schema version.
    """
    from xlacli.flows.rebuild import can_rebuild, rebuild_report
    from xlacli.report.run_report import load_report as load

    path = Path(run_dir)
    if can_rebuild(path):
        rebuild_report(path)
    return load(path)


def load_profile(run_dir: StrPath) -> ProfileSummary | None:
    """The profile summary saved in a run folder, or None for a run not profiled."""
    from xlacli.report.profile import load_summary

    path = Path(run_dir)
    return load_summary(path if path.is_dir() else path.parent)


def find_run(name: StrPath | None = None) -> Path:
    """A run folder by path, by its name under the runs folder, or (None) the latest.

    Raises:
        UsageError: no run yet, or no such path nor run name (naming the recent runs).
    """
    from xlacli.flows.saved_runs import resolve_run

    return resolve_run(None if name is None else Path(name))


def runs_folder() -> Path:
    """Where runs go from here: ``[tool.xlacli]``'s project's, else ``.xlacli/runs``."""
    from xlacli.flows.saved_runs import runs_folder as folder

    return folder()


def list_runs(folder: StrPath | None = None) -> list[RunEntry]:
    """The runs in ``folder`` (default: ``runs_folder()``), newest first, each
    with its command, model and verdict (``xlacli runs``)."""
    from xlacli.flows.saved_runs import list_runs as listed

    return listed(Path(folder) if folder is not None else runs_folder())


def remove_runs(
    keep: int | None = None, *, failed: bool = False, runs: list[RunEntry] | None = None
) -> list[RunEntry]:
    """Delete all but the newest ``keep`` runs and (``failed``) every failed one;
    only folders xlacli made. ``runs``: the listing to choose from (default: ``list_runs()``).

    Returns:
        The runs removed.
    """
    from xlacli.flows.saved_runs import remove_runs as remove
    from xlacli.flows.saved_runs import select_removals

    removed = select_removals(list_runs() if runs is None else runs, keep, failed)
    remove(removed)
    return removed


def diff_hlo(
    left: StrPath, right: StrPath, graph: str | None = None, *, stage: str = "post"
) -> DiffReport:
    """The structural HLO diff of two inputs (``xlacli diff-hlo``): HLO text or
    ``HloModuleProto`` files, XLA dump folders, or run folders.

    Args:
        left: The HLO before; with ``graph``, a run folder. A run folder may be
            named as ``xlacli runs`` lists it.
        right: The HLO after; with ``graph``, a graph's hash prefix in ``left``.
        graph: The other graph's hash prefix: two graphs of one run.
        stage: For folders, the HLO ``pre`` or ``post`` XLA's optimizations.

    Returns:
        The diff; ``identical`` is True when only names or order differ.

    Raises:
        UsageError: missing inputs, or two of different kinds.
        HloParseError: malformed HLO (a ``UsageError``, with its position).
    """
    from xlacli.flows.saved_runs import resolve_run, run_by_name
    from xlacli.hlo.gc_pause import gc_paused
    from xlacli.hlo.inputs import diff_paths, run_graph_files

    before, after = Path(left), Path(right)
    if graph is not None:  # RUN HASH HASH: two graphs of one run
        run = resolve_run(before)  # a path or a run's name; "does not exist" lists the runs
        before, after = run_graph_files(run, (os.fspath(right), graph), stage)
    else:  # two runs may be named as `xlacli runs` lists them
        before, after = run_by_name(before), run_by_name(after)
    with gc_paused(freeze=True):
        return diff_paths(before, after, stage)


def diff_run_folders(left: StrPath, right: StrPath) -> RunFolderDiff:
    """What two run folders add to their HLO diff (``diff-hlo RUN_A RUN_B``): memory and
    precision graph by graph, and compile cost by source line (empty for other inputs)."""
    from xlacli.flows.run_diff import run_folder_diff

    return run_folder_diff(Path(left), Path(right))


def write_html(
    run_dir: StrPath, output: StrPath | None = None, report: RunReport | None = None
) -> Path:
    """Write a saved run's HTML page, ``RUN/report.html`` unless ``output`` names another
    file; ``report``: the run's report when the caller holds it. Returns the page's path.

    Raises:
        UsageError: the page cannot be written.
    """
    from xlacli.flows.pages import write_run_html

    return write_run_html(Path(run_dir), None if output is None else Path(output), report=report)
