"""Anomaly mode (the backward ops' user lines) only while graphs are new: a
cached step pays no Python stack per autograd node (issue 40)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import ASSETS, run_cli
from xlacli.run_folder.request import STEADY_STEPS_BEFORE_PAUSE

SCRIPT = ASSETS / "scripts" / "anomaly_probe.py"


def test_anomaly_mode_stops_once_steps_are_cached_and_lines_stay(tmp_path: Path) -> None:
    run = tmp_path / "run"
    result = run_cli("compile", SCRIPT, "--out", run, "--format", "json", live=True)
    assert result.code == 0, result.stderr
    printed = dict(
        re.findall(r"^(step \d+|after) anomaly (\w+)$", (run / "child.log").read_text(), re.M)
    )
    report = json.loads(result.stdout)
    compiled_at = {event["step"] for event in report["events"]}
    # On while graphs are new; paused once STEADY_STEPS_BEFORE_PAUSE steps in a row
    # compiled nothing (the mode printed at a step is the one its forward pass ran with).
    expected, steady = {}, 0
    for step in range(16):
        expected[f"step {step}"] = str(steady < STEADY_STEPS_BEFORE_PAUSE)
        steady = 0 if step in compiled_at else steady + 1
    assert printed == {**expected, "after": "False"}
    assert "False" in expected.values()  # the script is long enough to pause
    # The graphs compiled while it was on still name the forward line of their backward ops.
    hlo = next(run.glob("graphs/*/hlo.after.txt")).read_text()
    # The forward line itself (the probe's line 14), not a library frame under it.
    assert re.search(r"xlacli_backward_of@[^\"]*anomaly_probe\.py@14[./]", hlo), hlo[:2000]
