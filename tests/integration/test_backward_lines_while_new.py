"""Anomaly mode (the backward ops' user lines) only while graphs are new: a
cached step pays no Python stack per autograd node (issue 40)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import ASSETS, run_cli

SCRIPT = ASSETS / "scripts" / "anomaly_probe.py"


def test_anomaly_mode_stops_once_steps_are_cached_and_lines_stay(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_cli("compile", SCRIPT, "--out", run, "--format", "json", live=True)
    assert result.code == 0, result.stderr
    printed = dict(
        re.findall(r"^(step \d|after) anomaly (\w+)$", (run / "child.log").read_text(), re.M)
    )
    report = json.loads(result.stdout)
    compiled_at = {event["step"] for event in report["events"]}
    # On while the first graphs are traced; off from the step after one that compiled nothing.
    assert printed["step 0"] == "True"
    steady = min(step for step in range(5) if step not in compiled_at)
    assert all(printed[f"step {step}"] == "False" for step in range(steady + 1, 5))
    assert printed["after"] == "False"  # the user's own setting, given back
    # The graphs compiled while it was on still name the forward line of their backward ops.
    hlo = next(run.glob("graphs/*/hlo.after.txt")).read_text()
    assert "xlacli_backward_of@" in hlo
