"""The zoo's cheapest cases, as CI runs them (the full sweep runs outside CI:
python benchmarks/zoo/run.py; its table is docs/zoo.md), and its bookkeeping."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks.zoo.results import Row, append_row, read_rows, table, write_table
from benchmarks.zoo.run import _xlacli_locations, main, ordered, run_one
from tests.conftest import REPO, run_cli
from tests.recorded_cli import run_bare


def replayed_xlacli(command: list[str], timeout: float, env: dict[str, str]):
    """The case's ``python -m xlacli ...`` through the suite's recordings."""
    result = run_cli(*command[3:], cwd=REPO, env=env, timeout=timeout)
    return subprocess.CompletedProcess(command, result.code, result.stdout, result.stderr)


def replayed_bare(command: list[str], timeout: float, env: dict[str, str]):
    """The case's bare run (``python bare.py ... OUT ...``), recorded with the file it writes."""
    output = next(Path(word) for word in command if word.endswith(".json"))
    return run_bare(command[1:], env=env, output=output, timeout=timeout)


PACKAGE_FILE = str(Path(__file__).resolve().parents[2] / "xlacli" / "child" / "transfers.py")


@pytest.mark.e2e
@pytest.mark.parametrize(("case", "mode"), [("bert", "training"), ("train_eval", "script")])
def test_cheap_zoo_cases_pass(case, mode, tmp_path):
    pytest.importorskip("transformers")
    row = run_one(
        case,
        mode,
        steps=3,
        timeout=600,
        work=tmp_path,
        xlacli=replayed_xlacli,
        bare_run=replayed_bare,
    )
    assert row.verdict == "pass", row
    assert row.compiles == row.bare_compiles and row.compiles


def test_a_location_inside_xlacli_fails_the_verdict():
    report = {
        "graphs": [{"frames": [f"to ({PACKAGE_FILE}:38)"], "site": "/u/xlacli/train.py:3"}],
        "events": [{"cause": {"location": "/u/train.py:3", "library_location": None}}],
        "memory": {"biggest": [{"source": f"{PACKAGE_FILE}:38"}]},
        "lines": [{"peak_library_site": "xlacli/child/transfers.py:40 (to)"}],
    }
    # frames are stack dumps, not locations; a user's folder named xlacli is the user's
    assert _xlacli_locations(report) == [f"{PACKAGE_FILE}:38", "xlacli/child/transfers.py:40"]


def test_the_table_has_one_row_per_run():
    rows = [Row("bert", "transformers", "training", 4, 4, 12.3, "pass", 20.6, "abc1234")]
    line = table(rows).splitlines()[2]
    assert line == "| bert | transformers | training | 4 | 4 | 12 s | 21 s | abc1234 | pass |"


def _row(model: str, mode: str, verdict: str = "pass") -> Row:
    return Row(model, "transformers", mode, 1, 1, 1.0, verdict)


def test_a_rerun_replaces_the_row_and_rows_follow_the_cases(tmp_path):
    results = tmp_path / "zoo.jsonl"
    for row in (_row("gpt2", "training", "exit 3"), _row("bert", "inference")):
        append_row(results, row)
    append_row(results, _row("gpt2", "training"))
    rows = ordered(read_rows(results))
    assert [(r.model, r.mode, r.verdict) for r in rows] == [
        ("bert", "inference", "pass"),
        ("gpt2", "training", "pass"),
    ]


def test_the_table_replaces_the_old_one_and_keeps_the_prose(tmp_path):
    doc = tmp_path / "zoo.md"
    doc.write_text("# Zoo\n\nWhat ran.\n\n| model | old |\n|---|---|\n| x | y |\n\nAfter.\n")
    write_table(doc, [_row("bert", "training")])
    text = doc.read_text()
    assert text.startswith("# Zoo\n\nWhat ran.\n\n| model | family |")
    assert "| x | y |" not in text and text.endswith("| pass |\n\nAfter.\n")


def test_resume_skips_what_passed_and_reruns_what_failed(tmp_path, monkeypatch):
    results = tmp_path / "zoo.jsonl"
    append_row(results, _row("bert", "inference"))
    append_row(results, _row("bert", "training", "exit 3"))
    ran = []

    def fake_run(name, mode, steps, timeout, work):
        ran.append((name, mode))
        return _row(name, mode)

    monkeypatch.setattr("benchmarks.zoo.run.run_one", fake_run)
    assert main(["--only", "bert", "--resume", "--results", str(results)]) == 0
    assert ran == [("bert", "training")]
    assert [r.verdict for r in ordered(read_rows(results))] == ["pass", "pass"]
