"""A check in CI's forms: JUnit XML and GitHub Actions' workflow commands and step summary.

Each is text; the command writes it where CI reads it (``cli/output.py``).
"""

from __future__ import annotations

from xml.etree import ElementTree

from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION, CheckOutcome, CheckResult
from xlacli.errors import XlacliError
from xlacli.paths import display_location, display_path, split_location
from xlacli.render.check import explained_compiles
from xlacli.report.run_report import CompileEvent, RunReport


def junit_xml(outcome: CheckOutcome, *, allow_improvements: bool = False) -> str:
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
    return _suite_text(suite)


def junit_error_xml(error: XlacliError) -> str:
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
    return _suite_text(suite)


def _suite_text(suite: ElementTree.Element) -> str:
    ElementTree.indent(suite)
    return ElementTree.tostring(suite, encoding="utf-8", xml_declaration=True).decode("utf-8")


def _fails(result: CheckResult, allow_improvements: bool) -> bool:
    return result.status == REGRESSION or (result.status == IMPROVEMENT and not allow_improvements)


def github_commands(outcome: CheckOutcome, report: RunReport) -> list[str]:
    """Annotations at the user's lines, then one per regressed or improved check."""
    lines = [_annotation("error", event) for event in explained_compiles(report, outcome)]
    title = _escape_property("xlacli check")
    lines += [f"::error title={title}::{_escape(_sentence(r))}" for r in outcome.regressions]
    lines += [
        f"::warning title={title}::{_escape(_sentence(r))} (update the baseline)"
        for r in outcome.improvements
    ]
    return lines


def github_error_command(error: XlacliError) -> str:
    """The ``::error`` annotation of a check that could not run."""
    hint = f" ({error.hint})" if error.hint else ""
    title = _escape_property("xlacli check: error")
    return f"::error title={title}::{_escape(error.message + hint)}"


def error_summary(error: XlacliError) -> str:
    """The step summary of a check that could not run."""
    hint = f" ({error.hint})" if error.hint else ""
    return f"## xlacli check: error (exit {error.exit_code})\n\n{error.message}{hint}\n"


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
