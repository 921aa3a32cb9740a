"""``xlacli runs`` (issue 38): runs in the order they started, aged from their
start, and named by the command that made them, on run folders built by hand."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from xlacli.flows.saved_runs import command_of, list_runs


def _run(folder: Path, name: str, started: float, **request: object) -> Path:
    run = folder / name
    run.mkdir(parents=True)
    (run / "request.json").write_text(json.dumps({"model_path": "m.py", **request}))
    os.utime(run / "request.json", (started, started))
    return run


def test_runs_are_ordered_and_aged_by_when_they_started(tmp_path):
    now = time.time()
    old = _run(tmp_path, "old", now - 17 * 60)
    new = _run(tmp_path, "new", now - 5 * 60)
    # The old run's folder changed last (a report rendered again, a file added).
    (old / "report.html").write_text("")
    os.utime(old, (now, now))
    entries = list_runs(tmp_path)
    assert [entry.name for entry in entries] == ["new", "old"]
    assert 17 * 60 - 5 <= entries[1].age_s <= 17 * 60 + 60
    assert new.exists()


def test_the_command_is_the_one_that_made_the_run(tmp_path):
    now = time.time()
    checked = _run(tmp_path, "checked", now, command="check")  # --update-baseline: no check.json
    profiled = _run(tmp_path, "profiled", now, command="profile")
    compiled = _run(tmp_path, "compiled", now, command="compile")
    assert [command_of(path) for path in (checked, profiled, compiled)] == [
        "check",
        "profile",
        "compile",
    ]


def test_a_run_of_an_older_xlacli_is_known_by_its_files(tmp_path):
    old_check = _run(tmp_path, "a", time.time())
    (old_check / "check.json").write_text("{}")
    old_profile = _run(tmp_path, "b", time.time())
    (old_profile / "profile.json").write_text("{}")
    assert command_of(old_check) == "check"
    assert command_of(old_profile) == "profile"
    assert command_of(_run(tmp_path, "c", time.time())) == "compile"
