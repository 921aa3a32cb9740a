"""Views of a check: terminal, JSON, JUnit XML and GitHub Actions."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.text import Text

from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION, CheckOutcome, CheckResult
from xlacli.analysis.recompiles.phases import EXPECTED_CATEGORIES
from xlacli.errors import UsageError, XlacliError
from xlacli.paths import display_location, display_path, split_location
from xlacli.render.console import plain_table, print_trimmed, stderr_console, stdout_console
from xlacli.render.recompiles import event_block, served_block
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


def print_check(outcome: CheckOutcome, report: RunReport, baseline: Path, fmt: str) -> None:
    """Print the check on stdout as text or JSON."""
    if fmt == "json":
        sys.stdout.write(
            json.dumps(check_json(outcome, report, baseline), indent=2, sort_keys=True)
        )
        sys.stdout.write("\n")
        return
    console: Console = stdout_console()
    print_trimmed(console, check_view(outcome, report, baseline))


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


def write_junit(outcome: CheckOutcome, path: Path, *, allow_improvements: bool = False) -> None:
    """JUnit XML, one test case per check: regressions fail, and improvements too
    unless they are allowed (then they pass, with a note)."""
    failing = [r for r in outcome.results if _fails(r, allow_improvements)]
    suite = ElementTree.Element(
        "testsuite",
        name="xlacli check",
        tests=str(len(outcome.results)),
        failures=str(len(failing)),
        errors="0",
    )
    for result in outcome.results:
        case = ElementTree.SubElement(suite, "testcase", classname="xlacli.check", name=result.name)
        if _fails(result, allow_improvements):
            failure = ElementTree.SubElement(
                case, "failure", message=f"{result.status}: {result.baseline} -> {result.current}"
            )
            failure.text = result.detail or result.status
        elif result.status != OK:
            note = ElementTree.SubElement(case, "system-out")
            note.text = f"{result.status} (allowed): {result.baseline} -> {result.current}"
    _write_suite(suite, path)


def _write_suite(suite: ElementTree.Element, path: Path) -> None:
    ElementTree.indent(suite)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        ElementTree.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as error:
        raise UsageError(f"cannot write --junit {path}: {error.strerror}") from None


def _fails(result: CheckResult, allow_improvements: bool) -> bool:
    return result.status == REGRESSION or (result.status == IMPROVEMENT and not allow_improvements)


def write_github(outcome: CheckOutcome, report: RunReport, *, to_stderr: bool = False) -> None:
    """Annotations at the user's lines and a Markdown step summary."""
    out = sys.stderr if to_stderr else sys.stdout
    for event in explained_compiles(report, outcome):
        print(_annotation("error", event), file=out, flush=True)
    title = _escape_property("xlacli check")
    for result in outcome.regressions:
        print(f"::error title={title}::{_escape(_sentence(result))}", file=out)
    for result in outcome.improvements:
        print(
            f"::warning title={title}::{_escape(_sentence(result))} (update the baseline)",
            file=out,
        )
    append_step_summary(markdown_summary(outcome, report))


def append_step_summary(markdown: str) -> None:
    """Append to the file GitHub names in GITHUB_STEP_SUMMARY; a missing or
    unwritable one is a warning, never the check's failure."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if not summary:
        stderr_console().print("[yellow]warning:[/] --github: GITHUB_STEP_SUMMARY is not set")
        return
    try:
        with open(summary, "a", encoding="utf-8") as handle:
            handle.write(markdown)
    except OSError as error:
        stderr_console().print(
            f"[yellow]warning:[/] --github: cannot write the step summary {escape(summary)}: "
            f"{escape(error.strerror or str(error))}"
        )


def write_junit_error(error: XlacliError, path: Path) -> None:
    """JUnit XML for a check that could not run (exit 2, 3, 4): one test case
    with an ``<error>``, so the CI's test reporter shows why."""
    suite = ElementTree.Element(
        "testsuite", name="xlacli check", tests="1", failures="0", errors="1"
    )
    case = ElementTree.SubElement(suite, "testcase", classname="xlacli.check", name="run")
    entry = ElementTree.SubElement(
        case, "error", message=error.message, type=f"exit {error.exit_code}"
    )
    entry.text = "\n".join(part for part in (error.details, error.hint) if part) or error.message
    _write_suite(suite, path)


def write_github_error(error: XlacliError, *, to_stderr: bool = False) -> None:
    """An ``::error`` annotation and a step summary for a check that could not run."""
    out = sys.stderr if to_stderr else sys.stdout
    hint = f" ({error.hint})" if error.hint else ""
    print(
        f"::error title={_escape_property('xlacli check: error')}::{_escape(error.message + hint)}",
        file=out,
        flush=True,
    )
    append_step_summary(
        f"## xlacli check: error (exit {error.exit_code})\n\n{error.message}{hint}\n"
    )


def markdown_summary(outcome: CheckOutcome, report: RunReport) -> str:
    """The step summary: a verdict, then the checks that changed."""
    verdict = (
        "regressed"
        if outcome.regressions
        else "improved (update the baseline)"
        if outcome.improvements
        else "unchanged"
    )
    lines = [f"## xlacli check: `{display_path(report.model)}` {verdict}", ""]
    changed = [r for r in outcome.results if r.status != OK]
    if changed:
        lines += ["| check | baseline | current | status |", "|---|---|---|---|"]
        lines += [f"| {r.name} | {r.baseline} | {r.current} | {r.status} |" for r in changed]
        lines.append("")
    for event in explained_compiles(report, outcome):
        where = f" at `{display_location(event.cause.location)}`" if event.cause.location else ""
        lines.append(
            f"- step {event.step}: **{event.cause.category}**{where}: {event.cause.detail}"
        )
    lines.append(
        f"\n{len(outcome.results) - len(changed)} of {len(outcome.results)} checks unchanged.\n"
    )
    return "\n".join(lines)


def _annotation(level: str, event: CompileEvent) -> str:
    message = _escape(f"{event.cause.category} at step {event.step}: {event.cause.detail}")
    title = _escape_property("xlacli: recompile")
    if not event.cause.location:
        return f"::{level} title={title}::{message}"
    # GitHub wants the path from the repository's root: the working directory in CI.
    file, line = split_location(display_location(event.cause.location) or "")
    return f"::{level} file={_escape_property(file)},line={line},title={title}::{message}"


def _sentence(result: CheckResult) -> str:
    return f"{result.name}: {result.baseline} -> {result.current} ({result.status})"


def _escape(text: str) -> str:
    """GitHub workflow commands escape %, CR and LF in messages."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """Property values (file=, title=) escape ``:`` and ``,`` as well: unescaped,
    they end the value (``src dir/in,put.py`` would be read as ``src dir/in``)."""
    return _escape(text).replace(":", "%3A").replace(",", "%2C")


# A check run keeps its outcome beside its report, for the HTML page.
CHECK_FILE = "check.json"


def save_check(data: Mapping[str, Any], run_dir: Path) -> Path:
    """Keep a check's outcome in its run folder, so the page can show it later."""
    path = run_dir / CHECK_FILE
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_check(run_dir: Path) -> dict[str, Any] | None:
    """The saved check outcome, or None for a run that was not a check."""
    try:
        data = json.loads((run_dir / CHECK_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None
