"""--output's suffix sets the format; a contradiction is refused, never ignored."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlacli.cli.options import OutputFormat, file_format
from xlacli.errors import UsageError
from xlacli.flows.saved_runs import RunEntry, resolve_run, select_removals
from xlacli.render.console import print_trimmed


@pytest.mark.parametrize(
    ("chosen", "output", "expected"),
    [
        (None, None, "text"),
        (None, Path("r.json"), "json"),
        (None, Path("page.HTML"), "html"),
        (None, Path("r.log"), "text"),
        (OutputFormat.json, Path("r.json"), "json"),
        (OutputFormat.html, Path("r.out"), "html"),
    ],
)
def test_the_format_written(chosen, output, expected):
    assert file_format(chosen, output) == expected


def test_a_suffix_contradicting_format_is_a_usage_error():
    with pytest.raises(UsageError, match=r"--format json but --output x\.html"):
        file_format(OutputFormat.json, Path("x.html"))


def test_no_printed_line_ends_in_spaces():
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    out = StringIO()
    console = Console(file=out, width=60, color_system=None)
    table = Table("a", "b")
    table.add_row("x" * 5, "long words " * 8)
    print_trimmed(console, table)
    assert all(line == line.rstrip() for line in out.getvalue().splitlines())


def _run(folder: Path, name: str, mtime: float) -> Path:
    import os

    run = folder / name
    run.mkdir(parents=True)
    (run / "request.json").write_text("{}")
    os.utime(run, (mtime, mtime))
    return run


def test_runs_by_name_and_the_latest(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runs = tmp_path / ".xlacli" / "runs"
    _run(runs, "old", 1_000)
    newest = _run(runs, "new", 2_000)
    assert resolve_run(None).resolve() == newest
    assert resolve_run(Path("old")).resolve() == runs / "old"
    with pytest.raises(UsageError, match="nope does not exist") as raised:
        resolve_run(Path("nope"))
    assert "new\n  old" in (raised.value.details or "")


def test_select_removals_keeps_the_newest_and_drops_failed():
    entries = [
        RunEntry(Path(name), "compile", "m.py", "", age, failed)
        for name, age, failed in (("a", 1, False), ("b", 2, True), ("c", 3, False))
    ]
    assert [e.name for e in select_removals(entries, 2, False)] == ["c"]
    assert [e.name for e in select_removals(entries, None, True)] == ["b"]
    assert [e.name for e in select_removals(entries, 2, True)] == ["c", "b"]
