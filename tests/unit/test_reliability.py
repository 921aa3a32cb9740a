"""Issue 9 (reliability under faults and in CI), the parts that need no model run.

Each test names the issue's item it guards. The runs of real models under
faults are in ``tests/faults/``.
"""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import redirect_stdout
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.conftest import REPO, run_cli
from tests.unit.analysis.test_check import baseline
from xlacli.analysis.check.baseline import check_settings, load_baseline
from xlacli.analysis.check.checks import CheckOutcome, CheckResult
from xlacli.capture.env import _with_dump_flags, flag_safe_dump_dir, is_flag_safe
from xlacli.capture.signals import StopSignals
from xlacli.cli.output import write_github, write_github_error, write_junit_error
from xlacli.config import load_config, project_runs_dir
from xlacli.errors import CaptureError, ModelError, UsageError
from xlacli.flows.tensorboard import check_port_free
from xlacli.render.compile_report import CompileReportView
from xlacli.render.view import show
from xlacli.report.run_report import CompileCause, CompileEvent, RunReport
from xlacli.run_folder.request import RunPaths

ODD = "a b/é ü,x"  # a space, non-ASCII letters, a comma


# -- 1: XLA_FLAGS cannot carry a space, and knows no quoting ------------------


def test_dump_flags_are_not_shell_quoted():
    flags = _with_dump_flags("--xla_cpu_use_thunk_runtime=false --xla_dump_to=/old", Path("/d"))
    assert flags == "--xla_cpu_use_thunk_runtime=false --xla_dump_to=/d --xla_dump_hlo_as_text"


def test_a_run_folder_with_spaces_dumps_through_a_plain_link(tmp_path):
    paths = RunPaths(tmp_path / ODD / "run")
    paths.raw.mkdir(parents=True)
    with flag_safe_dump_dir(paths) as dump_dir:
        assert is_flag_safe(dump_dir) and not is_flag_safe(paths.xla_dump)
        (dump_dir / "module_0001.txt").write_text("HloModule m")  # as XLA writes
    assert (paths.xla_dump / "module_0001.txt").read_text() == "HloModule m"
    assert not dump_dir.exists() and not dump_dir.parent.exists()


def test_a_plain_run_folder_is_used_as_it_is(tmp_path):
    paths = RunPaths(tmp_path / "run")
    with flag_safe_dump_dir(paths) as dump_dir:
        assert dump_dir == paths.xla_dump


# -- 2: signals are recorded, never raised; the child dies with its parent -----


def test_stop_signals_are_recorded_not_raised():
    # The handlers before are put back: SIG_DFL, or one of the test process's own
    # (coverage's, when measured with `sigterm = True`).
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with StopSignals() as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # handlers run between bytecodes
    assert (stop.received, stop.count, stop.name) == (signal.SIGTERM, 2, "SIGTERM")
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


LIFELINE_PARENT = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", {child!r}], env={env!r})
print(child.pid, flush=True)
time.sleep(600)
"""
LIFELINE_CHILD = """
import signal, sys, time
from xlacli.run_folder.lifeline import die_with_parent
def stop(signum, frame):
    sys.exit(0)
signal.signal(signal.SIGTERM, stop)
die_with_parent()
time.sleep(600)
"""


def test_the_child_dies_when_its_parent_is_killed():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    parent = subprocess.Popen(
        [sys.executable, "-c", LIFELINE_PARENT.format(child=LIFELINE_CHILD, env=env)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    time.sleep(1.0)  # the child has set its lifeline
    parent.kill()
    parent.wait()
    assert _gone(child_pid, timeout=10)


def _gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split(")")[-1].split()[0] == "Z":
                    return True  # dead, waiting for init to reap it
        except FileNotFoundError:
            return True
        time.sleep(0.1)
    return False


# -- 8 and 17: baselines ----------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"train": True}, "recorded with --no-train, this run asks for --train"),
        ({"steps": 3}, "recorded with --steps 5, this run asks for --steps 3"),
        ({"warmup": 0}, "--warmup 0"),
    ],
)
def test_other_settings_than_the_baselines_are_refused(settings, named):
    with pytest.raises(UsageError, match=named) as caught:
        check_settings(baseline(), settings)
    assert caught.value.exit_code == 2 and "--update-baseline" in (caught.value.hint or "")


def test_same_or_unasked_settings_pass():
    check_settings(baseline(), {"steps": 5, "warmup": None, "train": False, "optimizer": "adamw"})
    check_settings(baseline(train=True, optimizer="adamw"), {"optimizer": "adamw"})
    with pytest.raises(UsageError, match="--optimizer sgd"):
        check_settings(baseline(train=True, optimizer="adamw"), {"optimizer": "sgd"})


def test_a_wrongly_typed_baseline_value_is_named_in_words(tmp_path):
    data = {**json.loads(_baseline_json()), "steps": "five"}
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError) as caught:
        load_baseline(path)
    assert 'steps is "five", expected an integer' in caught.value.message
    assert "ValueError" not in caught.value.message and "(" not in caught.value.message


def test_a_newer_baseline_asks_to_upgrade_xlacli_not_to_downgrade_it(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({**json.loads(_baseline_json()), "baseline_version": 2}))
    with pytest.raises(UsageError) as caught:
        load_baseline(path)
    assert "upgrade xlacli" in (caught.value.hint or "")
    assert "--update-baseline" not in (caught.value.hint or "")


def _baseline_json() -> str:
    from xlacli.analysis.check.baseline import dump_baseline

    return dump_baseline(baseline())


def test_config_types_are_said_in_words(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.xlacli]\nsteps = "five"\n')
    with pytest.raises(UsageError, match="steps must be an integer, not 'five'"):
        load_config(tmp_path)


# -- 9, 10, 11: GitHub and JUnit ----------------------------------------------


def _report(location: str) -> RunReport:
    cause = CompileCause("input_shape", location, None, "f32[2] -> f32[3]")
    event = CompileEvent(3, "abc", 0.1, True, cause)
    return RunReport("m.py", "CPU", 5, 5, False, "/r", 2, 5, 0.2, 0.1, (), events=(event,))


def test_annotation_properties_are_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    outcome = CheckOutcome((CheckResult("compilations", "1", "2", "regression", "1 -> 2"),))
    out = io.StringIO()
    with redirect_stdout(out):
        write_github(outcome, _report(str(tmp_path / "src dir" / "in,put.py") + ":7"))
    first = out.getvalue().splitlines()[0]
    assert first.startswith("::error file=src dir/in%2Cput.py,line=7,title=xlacli%3A recompile::")


def test_an_unwritable_step_summary_warns_and_goes_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "missing" / "summary.md"))
    write_github(CheckOutcome(()), _report("m.py:1"))
    assert "warning: --github: cannot write the step summary" in capsys.readouterr().err


@pytest.mark.parametrize(
    "error", [UsageError("no baseline"), ModelError("boom"), CaptureError("x")]
)
def test_a_check_that_cannot_run_still_reports_to_ci(tmp_path, monkeypatch, capsys, error):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    write_junit_error(error, tmp_path / "junit.xml")
    write_github_error(error)
    suite = ElementTree.parse(tmp_path / "junit.xml").getroot()
    assert suite.get("errors") == "1"
    entry = suite.find("testcase/error")
    assert entry is not None and entry.get("message") == error.message
    assert entry.get("type") == f"exit {error.exit_code}"
    assert capsys.readouterr().out.startswith(f"::error title=xlacli check%3A error::{error}")
    assert f"exit {error.exit_code}" in summary.read_text()


# -- 12: a port in TIME_WAIT is free to a server ---------------------------------


def test_a_port_in_time_wait_is_free():
    """A connection TensorBoard served (its server sets SO_REUSEADDR, as servers
    do) leaves the port in TIME_WAIT; TensorBoard can bind it again, so can we."""
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("localhost", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("localhost", port))
        accepted, _ = server.accept()
        accepted.close()  # the side that closes first keeps TIME_WAIT on the port
        time.sleep(0.1)
        client.close()
    check_port_free(port)


def test_a_port_being_listened_on_is_taken():
    with socket.socket() as server:
        server.bind(("localhost", 0))
        server.listen()
        with pytest.raises(UsageError, match="already in use"):
            check_port_free(server.getsockname()[1])


# -- 13: runs go under the project root ------------------------------------


def test_runs_go_under_the_configured_project_root(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.xlacli]\nmodel = "m.py"\n')
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    config = load_config(tmp_path / "sub" / "deeper")
    assert project_runs_dir(config) == tmp_path / ".xlacli" / "runs"
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert project_runs_dir(load_config(tmp_path / "sub")) is None


# -- 14, 15, 16: help, completion, Next: -----------------------------------------


def test_help_shows_brackets_and_whole_option_names():
    result = run_cli("check", "--help", env={"COLUMNS": "80"})
    assert result.code == 0
    assert "[default: [tool.xlacli] model]" in result.stdout
    assert "--allow-improvements" in result.stdout
    assert "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= 80


def test_shell_completion_is_offered_and_completes():
    # Without a shell among its ancestors (CI, pytest workers) typer cannot detect one:
    # typer's switch for tests makes --show-completion take the shell's name instead.
    result = run_cli(
        "--show-completion", "bash", env={"_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    )
    assert result.code == 0 and "_XLACLI_COMPLETE" in result.stdout
    completed = subprocess.run(
        [sys.executable, "-m", "xlacli"],
        env={
            **os.environ,
            "_XLACLI_COMPLETE": "complete_bash",
            "COMP_WORDS": "xlacli comp",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert completed.stdout.split() == ["compile"]


def test_next_command_is_whole_quoted_and_keeps_the_runs_options(tmp_path, monkeypatch):
    from rich.console import Console

    monkeypatch.chdir(tmp_path)
    model = tmp_path / ("a very long folder name " * 4) / "my model.py"
    report = RunReport(
        str(model),
        "CPU",
        2,
        2,
        True,
        str(tmp_path / "run"),
        1,
        2,
        0.1,
        0.1,
        (),
        options=("--train", "--optimizer", "adamw"),
    )
    out = io.StringIO()
    show(CompileReportView(report), "text", Console(file=out, width=80))
    expected = (
        f"Next: xlacli profile '{model.relative_to(tmp_path)}' --steps 50 --train --optimizer adamw"
    )
    assert expected in out.getvalue().splitlines()


def test_reports_saved_before_options_existed_still_load(tmp_path):
    from xlacli.report.run_report import dump_report, load_report

    data = json.loads(dump_report(_report("m.py:1")))
    del data["options"]
    (tmp_path / "report.json").write_text(json.dumps(data))
    assert load_report(tmp_path).options == ()
