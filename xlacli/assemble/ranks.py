"""Rank 0's merge: every rank's run folder into one ``ranks.json`` (pure: reads
the folders the ranks wrote, runs no model), so ``xlacli report OUT`` can redo it."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from xlacli.analysis.ranks.divergence import find_divergence
from xlacli.analysis.ranks.hangs import explain_hang
from xlacli.analysis.ranks.stragglers import find_stragglers
from xlacli.analysis.spmd.collectives import collective_kind
from xlacli.capture.ranks import rank_folders
from xlacli.errors import UsageError
from xlacli.parse.frames import current_code_roots
from xlacli.parse.ir_dump import IrNode, parse_ir_node
from xlacli.report.profile import ProfileSummary, load_summary
from xlacli.report.ranks import RankHang, RanksReport, RankSummary
from xlacli.report.run_report import REPORT_FILE, RunReport, load_report
from xlacli.run_folder.hang import HANG_FILE, STACKS_FILE

T = TypeVar("T")


def merge_ranks(
    out: Path,
    world_size: int,
    launcher: str,
    hang_timeout_s: float | None = None,
    *,
    compare_steps: bool = True,
) -> RanksReport:
    """Merge the rank folders under ``out`` of a run of ``world_size`` ranks
    (``compare_steps`` False: no first divergence, as for a profile)."""
    folders = rank_folders(out)
    problems: list[str] = []
    reports = _reports(folders, world_size, problems)
    missing = tuple(rank for rank in range(world_size) if rank not in reports)

    def section(name: str, compute: Callable[[], T], empty: T) -> T:
        try:
            return compute()
        except Exception as error:  # one analysis costs its section, never the merge
            problems.append(f"{name}: {type(error).__name__}: {error}")
            return empty

    def collectives(rank: int, graph_hash: str) -> tuple[str, ...]:
        return _graph_collectives(
            _graph_text(folders[rank], reports[rank], graph_hash, "hlo_before")
        )

    def ir_nodes(rank: int, graph_hash: str) -> tuple[IrNode, ...]:
        text = _graph_text(folders[rank], reports[rank], graph_hash, "ir")
        nodes = (parse_ir_node(line) for line in text.splitlines())
        return tuple(node for node in nodes if node is not None)

    return RanksReport(
        world_size=world_size,
        launcher=launcher,
        ranks=tuple(_summary(rank, reports[rank], out) for rank in sorted(reports)),
        missing=missing,
        divergence=section(
            "first divergence", lambda: find_divergence(reports, collectives, ir_nodes), None
        )
        if compare_steps and len(reports) > 1
        else None,
        hangs=section("hangs", lambda: _hangs(folders, reports), ()),
        hang_timeout_s=hang_timeout_s,
        stragglers=section(
            "stragglers", lambda: find_stragglers(_profiles(folders, reports)), None
        ),
        divergence_checked=compare_steps,
        problems=tuple(problems),
    )


def _reports(
    folders: Mapping[int, Path], world_size: int, problems: list[str]
) -> dict[int, RunReport]:
    """Each rank's saved report; one that cannot be read is a problem, and missing."""
    reports = {}
    for rank in range(world_size):
        if rank in folders and (folders[rank] / REPORT_FILE).exists():
            try:
                reports[rank] = load_report(folders[rank])
            except UsageError as error:
                problems.append(f"rank {rank}: {error.message}")
    return reports


def _profiles(
    folders: Mapping[int, Path], reports: Mapping[int, RunReport]
) -> dict[int, ProfileSummary]:
    """The ranks' profile summaries (a ``profile`` run), by rank."""
    found = {}
    for rank in reports:
        summary = load_summary(folders[rank])
        if summary is not None:
            found[rank] = summary
    return found


def world_size_of(out: Path) -> int:
    """The ranks a merged folder holds (for ``xlacli report OUT`` without ranks.json).

    Raises:
        UsageError: no rank folder there.
    """
    folders = rank_folders(out)
    if not folders:
        raise UsageError(f"{out} holds no rank-R folder")
    return max(folders) + 1


def _summary(rank: int, report: RunReport, out: Path) -> RankSummary:
    times = [r.wall_time_s for r in report.step_records[report.warmup :]]
    return RankSummary(
        rank=rank,
        run_dir=str(Path(report.run_dir).relative_to(out.resolve()))
        if Path(report.run_dir).is_relative_to(out.resolve())
        else report.run_dir,
        steps=report.steps,
        compilations=report.compilations,
        executions=report.executions,
        graphs=len(report.graphs),
        steady_state_compiles=report.steady_state_compiles,
        error=report.error.message if report.error else None,
        step_time_s=statistics.median(times) if times else None,
    )


def _hangs(folders: Mapping[int, Path], reports: Mapping[int, RunReport]) -> tuple[RankHang, ...]:
    """Each rank's place, when the watchdog stopped any of them; else nothing."""
    if not any((folder / HANG_FILE).exists() for folder in folders.values()):
        return ()
    roots = current_code_roots()
    hangs = []
    for rank, folder in folders.items():
        stacks = folder / STACKS_FILE
        text = stacks.read_text(encoding="utf-8", errors="replace") if stacks.exists() else None
        hangs.append(explain_hang(rank, reports.get(rank), text, roots))
    return tuple(hangs)


def _graph_text(folder: Path, report: RunReport, graph_hash: str, role: str) -> str:
    """One of a graph's kept files (``ir``, ``hlo_before``), or "" when not kept."""
    graph = next((g for g in report.graphs if g.hash == graph_hash), None)
    name = graph.files.get(role) if graph else None
    if not name:
        return ""
    try:
        return (folder / name).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _graph_collectives(text: str) -> tuple[str, ...]:
    """The collective ops in a graph's HLO, by opcode (the text is scanned, not
    parsed: a merge must not fail on one graph)."""
    kinds = []
    for line in text.splitlines():
        _, _, rhs = line.partition(" = ")
        words = rhs.split("(", 1)[0].split()
        kind = collective_kind(words[-1]) if words else None
        if kind and kind not in kinds:
            kinds.append(kind)
    return tuple(kinds)
