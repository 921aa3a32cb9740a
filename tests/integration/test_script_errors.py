"""Script mode's bad input: each ends in one clear line and a documented exit
code, with the user's frames (or their script's own usage message)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import pytest

from tests.conftest import ASSETS, EXAMPLES, REPO, assert_clean_error, run_cli, wait_for_events

pytestmark = pytest.mark.e2e
SCRIPTS = ASSETS / "scripts"


def test_a_script_that_raises_shows_only_the_users_frames(tmp_path):
    result = run_cli("compile", SCRIPTS / "raises.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "raises.py raised ValueError: loss went bad: 1 during step 2")
    assert 'raises.py", line 8, in check' in result.stderr
    assert "runpy" not in result.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["steps"] == 2  # the steps before the failure are kept
    assert report["error"]["exit_code"] == 3


@pytest.mark.parametrize(("code", "exit_code"), [("0", 6), ("2", 3)])
def test_sys_exit_before_any_step(tmp_path, code, exit_code):
    out = tmp_path / "run"
    result = run_cli("compile", SCRIPTS / "exits.py", "--out", out, "--", code)
    assert result.code == exit_code, result.stderr
    assert "before any step ran" in result.stderr
    assert json.loads((out / "report.json").read_text())["steps"] == 0
    if code != "0":
        assert "exiting early" in result.stderr  # what the script printed


def test_argparse_rejecting_the_arguments_shows_the_scripts_usage(tmp_path):
    result = run_cli("compile", EXAMPLES / "scripts" / "train_cnn.py", "--out", tmp_path / "r")
    assert_clean_error(result, 3, "exited with SystemExit (sys.exit(2)) before any step ran")
    assert "usage: train_cnn.py" in result.stderr
    assert "the following arguments are required: --batch-size" in result.stderr


def test_a_module_that_does_not_exist():
    result = run_cli("compile", "-m", "no_such_pkg.train", cwd=REPO)
    assert_clean_error(result, 2, "no module named 'no_such_pkg.train'")


def test_a_module_runs_as_main_with_its_arguments(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(
        "import sys\nimport torch, torch_xla\n"
        "x = torch.ones(2, device=torch_xla.device())\n"
        "for _ in range(int(sys.argv[1])):\n    x = x + 1\n    torch_xla.sync()\n"
        "print('ARGS', sys.argv[1:], __name__)\n"
    )
    out = tmp_path / "run"
    result = run_cli("compile", "-m", "pkg.train", "--out", out, "--", "3", "--lr", cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert "ARGS ['3', '--lr'] __main__" in (out / "child.log").read_text()
    assert json.loads((out / "report.json").read_text())["steps"] == 3


def test_xmp_spawn_runs_one_process(tmp_path):
    out = tmp_path / "run"
    result = run_cli("compile", SCRIPTS / "spawned.py", "--out", out)
    assert result.code == 0, result.stderr
    assert "xlacli runs one process (nprocs=1)" in result.stderr
    assert json.loads((out / "report.json").read_text())["steps"] == 3


def test_a_script_that_never_touches_the_device(tmp_path):
    out = tmp_path / "run"
    result = run_cli("compile", SCRIPTS / "no_device.py", "--out", out, "--", "--n", "4")
    # A run that measured nothing is no success: its own exit code (issue 27).
    assert result.code == 6, result.stderr
    assert "never synced a graph on an XLA device" in result.stderr
    assert "No graph was compiled" in result.stdout


def test_sigterm_stops_a_script_with_its_partial_report(tmp_path):
    script = tmp_path / "forever.py"
    script.write_text(
        "import time, torch, torch_xla\n"
        "x = torch.ones(2, device=torch_xla.device())\n"
        "while True:\n    x = x + 1\n    torch_xla.sync()\n    time.sleep(0.3)\n"
    )
    run = tmp_path / "run"
    command = [sys.executable, "-m", "xlacli", "compile", str(script), "--out", str(run)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for_events(run, '"event": "step"', 2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted during step" in stderr
    report = json.loads((run / "report.json").read_text())
    assert report["steps"] >= 2 and report["error"]["kind"] == "interrupted"


def test_a_torchrun_script_is_refused_with_what_to_do(tmp_path):
    result = run_cli("compile", SCRIPTS / "needs_torchrun.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "needs_torchrun.py raised KeyError: 'RANK'")
    assert "RANK=0 LOCAL_RANK=0 WORLD_SIZE=1" in result.stderr
