"""One line per analysis that failed while the report was built (every renderer)."""

from __future__ import annotations

from xlacli.errors import EXIT_INCOMPLETE
from xlacli.report.run_report import Problem, RunReport


def problem_line(problem: Problem) -> str:
    """``the events analysis failed (ValueError: ...): ...`` in one line."""
    message = problem.message.splitlines()[0] if problem.message else ""
    what = f"{problem.exception}: {message}" if message else problem.exception
    return (
        f"the {problem.processor} analysis failed ({what}); its section is missing, the rest "
        f"of the report stands (exit {EXIT_INCOMPLETE}). This is a bug in xlacli: please "
        "report it with this run's report.json"
    )


def problem_lines(report: RunReport) -> list[str]:
    return [problem_line(problem) for problem in report.problems]
