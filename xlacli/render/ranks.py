"""The merged view of a multi-process run: ranks side by side, the first
divergence, and where each rank waited when a hang was stopped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.text import Text

from xlacli.paths import display_location, display_path, source_line
from xlacli.render.console import plain_table
from xlacli.render.view import Block
from xlacli.report.ranks import (
    Divergence,
    RankGraph,
    RankHang,
    RanksReport,
    Stragglers,
    dump_ranks,
)
from xlacli.units import counted, format_seconds, short_hash

_TRIGGER_WORDS = {"host_sync": "value read", "step_end": "step", "user_sync": "sync"}


@dataclass(frozen=True)
class RanksView:
    """A multi-process run merged (``out``: the folder of the ranks' run folders)."""

    report: RanksReport
    out: Path

    def text(self, width: int) -> list[Block]:
        return [ranks_text(self.report, self.out)]

    def json(self) -> str:
        return dump_ranks(self.report)


def ranks_text(report: RanksReport, out: Path) -> RenderableType:
    parts: list[RenderableType] = [
        Text.from_markup(
            f"[bold]{counted(report.world_size, 'rank')}[/] ({escape(report.launcher)}), "
            f"run folder {escape(display_path(out))}"
        ),
        _rank_table(report),
    ]
    if report.missing:
        missing = ", ".join(str(r) for r in report.missing)
        parts.append(Text(f"Missing: rank {missing} never wrote a report.", style="red"))
    parts.append(_divergence_view(report))
    if report.hangs:
        parts.append(_hang_view(report))
    if report.stragglers is not None:
        parts.append(_straggler_view(report.stragglers))
    parts.extend(
        Text(f"xlacli could not work this out (a bug in xlacli): {problem}", style="yellow")
        for problem in report.problems
    )
    parts.append(Text(f"Each rank's own report: xlacli report {display_path(out)}/rank-R"))
    return Group(*parts)


def _rank_table(report: RanksReport) -> RenderableType:
    table = plain_table(
        ("rank", "right"),
        ("steps", "right"),
        ("compiles", "right"),
        ("steady-state", "right"),
        ("executions", "right"),
        ("graphs", "right"),
        ("step time", "right"),
        ("status", "left"),
    )
    for rank in report.ranks:
        table.add_row(
            str(rank.rank),
            str(rank.steps),
            str(rank.compilations),
            str(rank.steady_state_compiles),
            str(rank.executions),
            str(rank.graphs),
            format_seconds(rank.step_time_s) if rank.step_time_s is not None else "-",
            "ok" if rank.error is None else escape(_headline(rank.error)),
        )
    return table


def _headline(message: str) -> str:
    """The part of an error before its details: ``x.py raised RuntimeError``."""
    return message.split(": ", 1)[0]


def _divergence_view(report: RanksReport) -> RenderableType:
    divergence = report.divergence
    if not report.divergence_checked:
        return Text(
            "Steps are not compared in a profile (its steps do not wait for the device); "
            "xlacli compile finds the first divergence.",
            style="dim",
        )
    if divergence is None and len(report.ranks) == 1 and report.world_size == 1:
        return Text(f"One rank: nothing to compare ({counted(report.ranks[0].steps, 'step')}).")
    if divergence is None:
        steps = max((r.steps for r in report.ranks), default=0)
        return Text(
            f"The ranks agree: every rank ran the same graphs in each of its {steps} steps.",
            style="green",
        )
    lines: list[RenderableType] = [
        Text.from_markup(f"[bold red]First divergence[/] at {escape(divergence.summary)}")
    ]
    for group in divergence.groups:
        lines.append(_group_line(group.ranks, group.graphs, group.reference))
        # The reference's own causes tell its history, not the divergence.
        lines.extend(_graph_line(graph, not group.reference) for graph in group.only_here)
    lines.append(_collectives_line(divergence))
    return Group(*lines)


def _group_line(ranks: tuple[int, ...], graphs: tuple[str, ...], reference: bool) -> Text:
    who = "rank " + ", ".join(str(r) for r in ranks)
    ran = " ".join(short_hash(g) for g in graphs) if graphs else "no step"
    return Text(f"  {who}: ran {ran}{'  (the reference)' if reference else ''}")


def _graph_line(graph: RankGraph, with_cause: bool) -> Text:
    site = display_location(graph.site) or "?"
    code = source_line(graph.site) if graph.site else None
    text = f"    {short_hash(graph.hash)} at {site}"
    text += f" ({_TRIGGER_WORDS.get(graph.trigger, graph.trigger)})"
    if code:
        text += f"  {code.strip()}"
    if graph.cause and with_cause:
        where = display_location(graph.cause_location)
        text += f"\n      cause: {graph.cause}" + (f" at {where}" if where else "")
        if graph.cause_detail:
            text += f": {graph.cause_detail}"
    if graph.collectives:
        text += f"\n      collectives: {', '.join(graph.collectives)}"
    return Text(text)


def _collectives_line(divergence: Divergence) -> Text:
    if divergence.collectives:
        return Text(
            "  The diverging graphs hold collectives: on real hardware the ranks hang or "
            "deadlock there.",
            style="red",
        )
    return Text(
        "  No collective in the diverging graphs: the ranks compile and run different "
        "programs (a hang comes only from a collective the others do not join).",
        style="dim",
    )


def _hang_view(report: RanksReport) -> RenderableType:
    after = f" for {report.hang_timeout_s:g} s" if report.hang_timeout_s else ""
    lines: list[RenderableType] = [
        Text.from_markup(
            f"[bold red]Hang:[/] no rank made progress{after}; every rank was stopped."
        )
    ]
    for hang in report.hangs:
        lines.append(Text(f"  {hang_sentence(hang)}"))
        lines.extend(Text(f"      {escape(frame)}", style="dim") for frame in hang.stack)
    return Group(*lines)


def hang_sentence(hang: RankHang) -> str:
    """``rank 0 waits in all_reduce at train.py:22 (average), after step 2 ...``."""
    where = display_location(hang.location) or "an unknown line"
    last = ""
    if hang.last_graph:
        last = f"; last graph {short_hash(hang.last_graph)} at {display_location(hang.last_site)}"
    if hang.state != "waiting":
        return f"rank {hang.rank} had ended after {hang.step} steps{last}"
    function = f" ({hang.function})" if hang.function else ""
    return (
        f"rank {hang.rank} waits in {hang.waits_in} at {where}{function}, "
        f"during step {hang.step}{last}"
    )


def _straggler_view(stragglers: Stragglers) -> RenderableType:
    rows = list(stragglers.extra_by_row_s)
    table = plain_table(
        ("rank", "right"),
        ("steps", "right"),
        ("step p50", "right"),
        ("mean", "right"),
        *((f"{row} /step", "right") for row in rows),
    )
    for rank in stragglers.ranks:
        table.add_row(
            str(rank.rank),
            str(rank.steps),
            format_seconds(rank.p50_s),
            format_seconds(rank.mean_s),
            *(format_seconds(rank.per_step_s[row]) for row in rows),
        )
    biggest = sorted(stragglers.extra_by_row_s.items(), key=lambda item: -item[1])
    where = ", ".join(f"{row} {_signed(seconds)}" for row, seconds in biggest if seconds > 0)
    return Group(
        Text("Step time per rank (profiled steps):", style="bold"),
        table,
        Text(
            f"Slowest: rank {stragglers.slowest}, {_signed(stragglers.extra_s)} a step over "
            f"the others' median" + (f"; per step: {where}" if where else "")
        ),
    )


def _signed(seconds: float) -> str:
    return ("+" if seconds >= 0 else "-") + format_seconds(abs(seconds))
