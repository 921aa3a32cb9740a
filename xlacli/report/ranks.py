"""The merged report of a multi-process run: ``OUT/ranks.json``.

Each rank's own report stays in ``OUT/rank-R/report.json``; this holds what only
the ranks together say: their counts side by side, the missing ones, the first
step where their graphs part, and (after ``--hang-timeout``) where each waited.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.errors import UsageError

MERGED_FILE = "ranks.json"
RANKS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class RankSummary:
    """One rank's counts, side by side with the others'."""

    rank: int
    run_dir: str  # relative to the merged folder: "rank-1"
    steps: int
    compilations: int
    executions: int
    graphs: int
    steady_state_compiles: int
    error: str | None  # the message the rank ended with, if it failed
    step_time_s: float | None = None  # median step wall time after the warm-up


@dataclass(frozen=True)
class RankGraph:
    """A graph one rank ran at the diverging step and another did not."""

    hash: str
    site: str | None  # the user's file:line behind it
    trigger: str  # step_end, user_sync, host_sync (a value read), ...
    cause: str | None  # the recompile category that made it, when it was compiled there
    cause_location: str | None
    cause_detail: str
    collectives: tuple[str, ...]  # collective ops in its HLO (all-reduce, ...)


@dataclass(frozen=True)
class RankAtStep:
    """What one group of ranks ran at the diverging step."""

    ranks: tuple[int, ...]
    graphs: tuple[str, ...]  # every graph hash it ran there, in order
    only_here: tuple[RankGraph, ...]  # the graphs the reference ranks did not run
    reference: bool  # the ranks the others are compared with (the majority)
    inputs: tuple[str, ...] = ()  # the step's input signature on its first rank


@dataclass(frozen=True)
class Divergence:
    """The first step where the ranks' sequences of graphs part."""

    step: int
    category: str  # the cause of the diverging graph: host_sync, input_shape, ..., step_count
    location: str | None  # the user's line behind it
    summary: str  # one sentence: rank 0 ran an extra graph at ... that rank 1 did not
    groups: tuple[RankAtStep, ...]
    collectives: bool  # a diverging graph holds a collective: on real hardware, a hang


@dataclass(frozen=True)
class RankHang:
    """Where one rank was when the hang watchdog stopped the run."""

    rank: int
    state: str  # "waiting" (stopped by the watchdog), "ended" (had finished or failed)
    waits_in: str | None  # the innermost function of its main thread (all_reduce, recv)
    location: str | None  # the user's innermost line on that stack
    function: str | None  # the user's function there
    step: int  # steps completed when it stopped
    last_graph: str | None
    last_site: str | None  # the sync site (user line) of its last graph
    stack: tuple[str, ...]  # the main thread's frames, innermost first: "fn (file:line)"


@dataclass(frozen=True)
class RankStepTime:
    """One rank's profiled step time and where it went, per step."""

    rank: int
    steps: int
    p50_s: float
    mean_s: float
    per_step_s: dict[str, float]  # compile, execute, transfers, tracing, python


@dataclass(frozen=True)
class Stragglers:
    """``profile`` across ranks: step time side by side, and where the slowest
    rank's extra time goes (its seconds per step minus the others' median)."""

    ranks: tuple[RankStepTime, ...]
    slowest: int
    extra_s: float  # the slowest rank's median step time minus the others' median
    extra_by_row_s: dict[str, float]


@dataclass(frozen=True)
class RanksReport:
    """The ranks of one launched run, merged by rank 0."""

    world_size: int
    launcher: str
    ranks: tuple[RankSummary, ...]
    missing: tuple[int, ...]  # ranks with no report (never finished, or never started)
    divergence: Divergence | None  # None: every rank ran the same graphs in each step
    hangs: tuple[RankHang, ...] = ()
    hang_timeout_s: float | None = None
    stragglers: Stragglers | None = None  # profile only
    # False for a profile: its steps do not wait for the device, so a step's
    # executions may be counted in the next, and steps cannot be compared.
    divergence_checked: bool = True
    problems: tuple[str, ...] = ()  # an analysis that failed: its section is left empty
    schema_version: int = RANKS_SCHEMA_VERSION

    @property
    def agree(self) -> bool:
        return self.divergence is None and not self.missing


def dump_ranks(report: RanksReport) -> str:
    return json.dumps(dataclasses.asdict(report), indent=2, sort_keys=True) + "\n"


def save_ranks(report: RanksReport, out: Path) -> Path:
    path = out / MERGED_FILE
    # Written whole, then renamed: the other ranks wait for it to appear.
    partial = out / f".{MERGED_FILE}.partial"
    partial.write_text(dump_ranks(report), encoding="utf-8")
    partial.replace(path)
    return path


def remove_merged(out: Path) -> None:
    """A new run's rank 0 drops the last run's merged report (``--force``)."""
    with contextlib.suppress(FileNotFoundError):
        (out / MERGED_FILE).unlink()


def load_ranks(out: Path) -> RanksReport:
    """Read ``ranks.json``.

    Raises:
        UsageError: missing, unreadable, or of another schema.
    """
    path = out / MERGED_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise UsageError(f"cannot read {path}: {error}") from None
    if data.get("schema_version") != RANKS_SCHEMA_VERSION:
        raise UsageError(f"{path} has another schema version ({data.get('schema_version')})")
    return ranks_from_dict(data)


def ranks_from_dict(data: dict[str, Any]) -> RanksReport:
    divergence = data.get("divergence")
    return RanksReport(
        world_size=data["world_size"],
        launcher=data.get("launcher", ""),
        ranks=tuple(RankSummary(**r) for r in data.get("ranks", [])),
        missing=tuple(data.get("missing", ())),
        divergence=_divergence_from_dict(divergence) if divergence else None,
        hangs=tuple(
            RankHang(**{**h, "stack": tuple(h.get("stack", ()))}) for h in data.get("hangs", [])
        ),
        hang_timeout_s=data.get("hang_timeout_s"),
        stragglers=_stragglers_from_dict(data.get("stragglers")),
        divergence_checked=data.get("divergence_checked", True),
        problems=tuple(data.get("problems", ())),
    )


def _stragglers_from_dict(data: dict[str, Any] | None) -> Stragglers | None:
    if not data:
        return None
    return Stragglers(
        ranks=tuple(RankStepTime(**r) for r in data["ranks"]),
        slowest=data["slowest"],
        extra_s=data["extra_s"],
        extra_by_row_s=dict(data["extra_by_row_s"]),
    )


def _divergence_from_dict(data: dict[str, Any]) -> Divergence:
    groups = tuple(
        RankAtStep(
            ranks=tuple(g["ranks"]),
            graphs=tuple(g["graphs"]),
            only_here=tuple(
                RankGraph(**{**o, "collectives": tuple(o.get("collectives", ()))})
                for o in g["only_here"]
            ),
            reference=g["reference"],
            inputs=tuple(g.get("inputs", ())),
        )
        for g in data["groups"]
    )
    return Divergence(**{**data, "groups": groups})
