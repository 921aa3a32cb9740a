"""A run's HTML page: what it shows is read from the run folder here, and the page written.

The page itself is a view (``render/html/run_page.py``) that reads no file.
"""

from __future__ import annotations

from pathlib import Path

from xlacli.assemble.source_snippets import load_snippets
from xlacli.paths import read_text_or_none, write_text_file
from xlacli.render.html.run_page import run_page_html
from xlacli.report.check import load_check
from xlacli.report.profile import load_summary
from xlacli.report.run_report import RunReport, load_report

HTML_FILE = "report.html"


def saved_run_page(report: RunReport, page_path: Path) -> str:
    """The page of ``report`` with what its run folder keeps beside it: the profile
    summary, the check's outcome, the user's source lines and the graphs' files."""
    root = Path(report.run_dir)
    return run_page_html(
        report,
        page_path=page_path,
        profile=load_summary(root),
        check=load_check(root),
        snippets=load_snippets(root),
        files=lambda relative: read_text_or_none(root / relative),
    )


def write_run_html(
    run_dir: Path, output: Path | None = None, report: RunReport | None = None
) -> Path:
    """Render the run saved in ``run_dir`` to ``output`` (default ``RUN/report.html``).

    ``report``: the run's report when the caller holds it (else read from ``run_dir``).
    """
    if report is None:
        report = load_report(run_dir)
    path = output or Path(report.run_dir) / HTML_FILE
    write_text_file(path, saved_run_page(report, path))
    return path
