"""The view of a check: the terminal's table and its JSON (CI's forms: ``render/ci.py``)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group, RenderableType
from rich.text import Text

from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION, CheckOutcome
from xlacli.analysis.recompiles.phases import EXPECTED_CATEGORIES
from xlacli.errors import XlacliError
from xlacli.paths import display_path
from xlacli.render.console import plain_table
from xlacli.render.recompiles import event_block, served_block
from xlacli.render.view import Block
from xlacli.report.run_report import CompileEvent, RunReport

_STYLES = {OK: "green", REGRESSION: "bold red", IMPROVEMENT: "yellow"}
MAX_ROWS = 25


def check_verdict(outcome: CheckOutcome) -> Text:
    """The check in one line, first: what regressed, or that nothing did."""
    if outcome.regressions:
        names = ", ".join(result.name for result in outcome.regressions[:3])
        return Text(f"regressed: {names}", style="bold red")
    if outcome.improvements:
        return Text(
            f"improved: {', '.join(r.name for r in outcome.improvements[:3])} "
            "(the baseline is stale)",
            style="bold yellow",
        )
    return Text(f"passed: all {len(outcome.results)} checks unchanged", style="bold green")


def check_view(outcome: CheckOutcome, report: RunReport, baseline: Path) -> RenderableType:
    """The table of checks (all of them, or those that changed when there are many),
    then the explanation of each compile that is new."""
    shown = outcome.results
    if len(shown) > MAX_ROWS:
        shown = tuple(r for r in shown if r.status != OK)
    table = plain_table(
        *((column, "left") for column in ("check", "baseline", "current", "status", "what changed"))
    )
    for result in shown:
        table.add_row(
            result.name,
            result.baseline,
            result.current,
            Text(result.status, style=_STYLES[result.status]),
            result.detail,
        )
    passed = sum(1 for r in outcome.results if r.status == OK)
    parts: list[RenderableType] = [
        check_verdict(outcome),
        Text.assemble(
            ("xlacli check ", "bold"),
            (display_path(report.model), "bold cyan"),
            f"  against {baseline}",
        ),
        table,
        Text(
            f"\n{passed} of {len(outcome.results)} checks unchanged, "
            f"{len(outcome.regressions)} regressed, {len(outcome.improvements)} improved"
        ),
    ]
    new = explained_compiles(report, outcome)
    served = [graph for graph in report.served_graphs if graph.steady_state]
    if outcome.regressions and (new or served):
        parts.append(Text("\nThe compiles behind it:", style="bold"))
        parts.extend(event_block(event) for event in new)
        parts.extend(served_block(graph) for graph in served)
    return Group(*parts)


def explained_compiles(report: RunReport, outcome: CheckOutcome) -> list[CompileEvent]:
    """The compiles behind a regression: the steady-state ones, and those of the
    graphs the baseline does not have, but for the expected ones (the optimizer
    state's first update, a lazy artefact): nothing to fix there."""
    if not outcome.regressions:
        return []
    new = set(outcome.new_graph_hashes)
    return [
        event
        for event in report.events
        if event.steady_state
        or (event.graph_hash in new and event.cause.category not in EXPECTED_CATEGORIES)
    ]


@dataclass(frozen=True)
class CheckView:
    """A check: the table of checks and the compiles behind a regression."""

    outcome: CheckOutcome
    report: RunReport
    baseline: Path

    def text(self, width: int) -> list[Block]:
        return [check_view(self.outcome, self.report, self.baseline)]

    def json(self) -> str:
        data = check_json(self.outcome, self.report, self.baseline)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"


def check_json(outcome: CheckOutcome, report: RunReport, baseline: Path) -> dict[str, object]:
    """The JSON form of a check."""
    return {
        "passed": not outcome.regressions and not outcome.improvements,
        "baseline": str(baseline),
        "run_dir": report.run_dir,
        "regressions": len(outcome.regressions),
        "improvements": len(outcome.improvements),
        "checks": [dataclasses.asdict(result) for result in outcome.results],
        "new_graphs": list(outcome.new_graph_hashes),
        "compiles": [
            {"step": e.step, "graph_hash": e.graph_hash, "cause": dataclasses.asdict(e.cause)}
            for e in explained_compiles(report, outcome)
        ],
        "served_graphs": [
            dataclasses.asdict(graph) for graph in report.served_graphs if graph.steady_state
        ],
    }


def check_error_json(error: XlacliError, report: RunReport, baseline: Path) -> dict[str, object]:
    """The JSON form of a check that could not be made: why, and its exit code."""
    return {
        "passed": False,
        "baseline": str(baseline),
        "run_dir": report.run_dir,
        "error": {"message": error.message, "hint": error.hint, "exit_code": error.exit_code},
        "checks": [],
    }
