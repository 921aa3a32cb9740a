"""SIGTERM and SIGINT at random moments of compile and profile, and SIGKILL of
xlacli itself: no process is left, and the run folder always holds a report
that ``xlacli report`` reads (issue 9, items 2, 4 and 17)."""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from tests.conftest import run_cli, wait_for_events
from tests.faults.conftest import FAULT_MODELS, processes_mentioning, start_cli

pytestmark = [pytest.mark.faults, pytest.mark.e2e]

TICKING = FAULT_MODELS / "ticking.py"
STEPS = "1000"  # never reached: every run is cut short


def _command(kind: str, run: Path) -> list[str | Path]:
    if kind == "profile":
        return ["profile", TICKING, "--steps", STEPS, "--warmup", "2", "--out", run]
    return ["compile", TICKING, "--steps", STEPS, "--out", run]


def assert_report_readable(run: Path) -> dict:
    """``xlacli report RUN`` reads the run (rebuilding it if need be)."""
    result = run_cli("report", run, "--format", "json")
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["steps"] < int(STEPS) + 2
    return report


@pytest.mark.parametrize("attempt", range(20))
def test_sigterm_at_a_random_moment(tmp_path, attempt):
    kind = ("compile", "profile")[attempt % 2]
    delay = random.Random(attempt).uniform(0.3, 6.0)
    run = tmp_path / "run"
    process = start_cli(*_command(kind, run))
    time.sleep(delay)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert processes_mentioning(str(run)) == [], f"left running after {delay:.1f} s"
    if not (run / "request.json").exists():
        # Killed before the run began (Python still starting): nothing to keep.
        assert process.returncode in (130, -signal.SIGTERM), stderr
        return
    assert process.returncode == 130, (delay, stderr)
    assert "Traceback" not in stderr
    report = assert_report_readable(run)
    assert report["error"]["kind"] == "interrupted", (delay, report["error"])


@pytest.mark.parametrize("kind", ["compile", "profile"])
def test_sigint_mid_run_forwards_once_and_keeps_the_partial_report(tmp_path, kind):
    run = tmp_path / "run"
    process = start_cli(*_command(kind, run))
    wait_for_events(run, '"event": "step"', 4)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert processes_mentioning(str(run)) == []
    what = "stopping the trace" if kind == "profile" else "stopping"
    assert f"xlacli: SIGINT: {what}" in stderr
    assert "interrupted during step" in stderr
    report = assert_report_readable(run)
    assert report["steps"] >= 4
    if kind == "profile":
        assert report["profile"]["steps"] >= 2  # the traced steps that completed


@pytest.mark.parametrize("kind", ["compile", "profile"])
def test_sigkill_of_xlacli_stops_the_child_and_the_report_is_rebuilt(tmp_path, kind):
    run = tmp_path / "run"
    process = start_cli(*_command(kind, run))
    wait_for_events(run, '"event": "step"', 4)
    process.kill()
    process.communicate(timeout=60)
    deadline = time.monotonic() + 60
    while processes_mentioning(str(run)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert processes_mentioning(str(run)) == [], "the model process outlived xlacli"
    assert not (run / "report.json").exists()
    report = assert_report_readable(run)
    assert report["steps"] >= 4 and report["graphs"]
    assert (run / "report.json").exists()
    if kind == "profile":
        assert report["profile"]["trace_files"]  # the child flushed the trace as it stopped
