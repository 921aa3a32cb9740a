"""Every bad input gets one clear line and a documented exit code, never our traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import MODELS, assert_clean_error, run_cli, wait_for_events

BAD = MODELS / "bad"


# -- caught in the parent, before torch is imported -------------------------


def test_missing_file(tmp_path):
    result = run_cli("compile", tmp_path / "nope.py")
    assert_clean_error(result, 2, "model file not found", "nope.py")


def test_not_a_python_file():
    assert_clean_error(run_cli("compile", BAD / "notes.txt"), 2, "not a Python file")


def test_folder_instead_of_file():
    assert_clean_error(run_cli("compile", BAD), 2, "is a folder")


def test_syntax_error_names_the_line():
    result = run_cli("compile", BAD / "syntax_error.py")
    assert_clean_error(result, 2, "syntax error in", "syntax_error.py:3")
    assert "def get_model(:" in result.stderr


def test_no_model_runs_as_a_script_and_a_script_with_no_step_fails(tmp_path):
    result = run_cli("compile", BAD / "no_model.py", "--out", tmp_path / "run")
    # It only defines functions: nothing ran, which is no success (exit 6).
    assert_clean_error(result, 6, "ran no step", "a model file defines get_model()")
    assert "defines neither get_model() nor model: running it as a script" in result.stderr
    assert "Next:" not in result.stdout
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["error"]["exit_code"] == 6


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("misspelt_get_model.py", ["did you mean get_model? found get_modle"]),
        ("inputs_only.py", ["looks like a model file (it defines get_inputs)", "no get_model()"]),
        ("empty.py", ["is empty"]),
        ("not_utf8.py", ["not_utf8.py:1: byte 0xe9 is not utf-8 text", "coding: latin-1"]),
    ],
)
def test_model_file_mistakes_are_usage_errors(tmp_path, name, words):
    result = run_cli("compile", BAD / name, "--out", tmp_path / "run")
    assert_clean_error(result, 2, *words)
    assert not (tmp_path / "run").exists()  # refused before a run folder was made


def test_no_inputs():
    assert_clean_error(run_cli("compile", BAD / "no_inputs.py"), 2, "no get_inputs()")


def test_unknown_factory():
    result = run_cli("compile", f"{BAD / 'factory.py'}:missing")
    assert_clean_error(result, 2, "defines no 'missing'", "make_pair")


def test_existing_output_folder_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    result = run_cli("compile", BAD / "no_inputs.py", "--out", tmp_path / "run")
    # The model file is checked first: fix the model, then the folder.
    assert result.code == 2
    result = run_cli("compile", MODELS / "shape_change.py", "--out", tmp_path / "run")
    assert_clean_error(result, 2, "already exists", "--force")


def test_unwritable_output_folder(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = run_cli("compile", MODELS / "shape_change.py", "--out", blocker / "run")
    assert_clean_error(result, 4, "cannot create the output folder")


def test_wrong_torch_version(tmp_path):
    # A dist-info found first on sys.path is what importlib.metadata reports.
    fake = tmp_path / "site"
    (fake / "torch-2.8.0.dist-info").mkdir(parents=True)
    (fake / "torch-2.8.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\n"
    )
    result = run_cli(
        "compile",
        MODELS / "shape_change.py",
        "--out",
        tmp_path / "run",
        env={"PYTHONPATH": f"{fake}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"},
    )
    assert_clean_error(result, 4, "torch 2.8.0 is installed", "needs torch 2.9")


def test_missing_torch_xla(monkeypatch):
    from importlib import metadata

    from xlacli.capture import runner
    from xlacli.errors import CaptureError

    real_version = metadata.version

    def version(name: str) -> str:
        if name == "torch-xla":
            raise metadata.PackageNotFoundError(name)
        return real_version(name)

    monkeypatch.setattr(metadata, "version", version)
    with pytest.raises(CaptureError, match="torch-xla is not installed"):
        runner.check_torch_xla_installed()


# -- caught in the child, with the user's own frames --------------------------


@pytest.mark.e2e
def test_import_raising(tmp_path):
    result = run_cli("compile", BAD / "import_raises.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "importing import_raises.py raised KeyError", 'CONFIG["width"]')


@pytest.mark.e2e
def test_get_model_raising_shows_user_frames(tmp_path):
    result = run_cli("compile", BAD / "get_model_raises.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "get_model() raised ValueError: depth must be positive")
    assert 'get_model_raises.py", line 10, in build_layers' in result.stderr
    assert (tmp_path / "run" / "report.json").exists()


@pytest.mark.e2e
def test_get_inputs_raising(tmp_path):
    result = run_cli("compile", BAD / "get_inputs_raises.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "get_inputs() raised FileNotFoundError", "load_batch")


@pytest.mark.e2e
def test_get_model_returning_something_else(tmp_path):
    result = run_cli("compile", BAD / "not_a_module.py", "--out", tmp_path / "run")
    assert_clean_error(result, 2, "get_model() returned a dict; expected a torch.nn.Module")


@pytest.mark.e2e
def test_inputs_of_the_wrong_type(tmp_path):
    result = run_cli("compile", BAD / "bad_inputs.py", "--out", tmp_path / "run")
    assert_clean_error(result, 2, "inputs['meta'] is", "Batch", "expected a tensor")


@pytest.mark.e2e
def test_factory_not_returning_a_pair(tmp_path):
    result = run_cli("compile", f"{BAD / 'factory.py'}:not_a_pair", "--out", tmp_path / "run")
    assert_clean_error(result, 2, "not_a_pair() returned a Linear", "(model, inputs)")


@pytest.mark.e2e
def test_forward_raising_shows_the_users_frames_not_ours(tmp_path):
    result = run_cli("compile", BAD / "forward_raises.py", "--out", tmp_path / "run")
    assert_clean_error(result, 3, "step 0 raised RuntimeError")
    assert 'forward_raises.py", line 11, in forward' in result.stderr
    assert "child/steps.py" not in result.stderr


# A training script that dies of SIGSEGV in native code in its first step, two
# functions below its loop (issue 38).
SEGFAULTS = """\
import ctypes
import torch
import torch_xla


def native_call():
    ctypes.string_at(0)


def train_step(model, x):
    model(x).sum().backward()
    native_call()
    torch_xla.sync()


def main():
    model = torch.nn.Linear(4, 2).to(torch_xla.device())
    for _ in range(3):
        train_step(model, torch.randn(2, 4).to(torch_xla.device()))


if __name__ == "__main__":
    main()
"""


@pytest.mark.e2e
def test_a_crash_shows_the_innermost_user_frames_never_xlaclis(tmp_path):
    (tmp_path / "train.py").write_text(SEGFAULTS)
    result = run_cli("compile", "train.py", "--out", "run", cwd=tmp_path)
    assert_clean_error(result, 4, "killed by SIGSEGV during step 0", "partial report was kept")
    stack = result.stderr.split("innermost first:\n")[1].splitlines()
    assert stack[0].startswith("  string_at (")  # where it crashed: ctypes
    assert stack[1:5] == [
        "  native_call (train.py:7)",
        "  train_step (train.py:12)",
        "  main (train.py:19)",
        "  <module> (train.py:23)",
    ]
    assert "runpy" not in result.stderr and "Extension modules" not in result.stderr
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert "native_call (train.py:7)" in report["error"]["details"]


@pytest.mark.e2e
def test_killed_child_keeps_partial_artifacts(tmp_path):
    run = tmp_path / "run"
    result = run_cli("compile", BAD / "killed.py", "--steps", "3", "--out", run)
    assert_clean_error(result, 4, "killed by SIGKILL during step 1", "partial report")
    report = json.loads((run / "report.json").read_text())
    assert report["steps"] == 1  # step 0 completed before the kill
    assert report["compilations"] == 1
    assert report["error"]["kind"] == "capture"
    graph = report["graphs"][0]
    assert (run / graph["files"]["hlo_after"]).exists()
    assert (run / graph["files"]["ir"]).exists()


@pytest.mark.e2e
def test_json_error_still_prints_the_partial_report(tmp_path):
    result = run_cli(
        "compile", BAD / "forward_raises.py", "--out", tmp_path / "run", "--format", "json"
    )
    assert result.code == 3
    report = json.loads(result.stdout)  # only JSON on stdout
    assert report["error"]["kind"] == "model"
    assert Path(report["run_dir"]).is_dir()


@pytest.mark.e2e
def test_sigterm_to_xlacli_keeps_the_partial_report(tmp_path):
    import signal
    import subprocess
    import sys

    model = tmp_path / "slow.py"
    model.write_text(
        "import time, torch\n"
        "def get_model():\n    return torch.nn.Linear(4, 4)\n"
        "def get_inputs(step):\n    time.sleep(0.3)\n    return torch.ones(2, 4)\n"
    )
    run = tmp_path / "run"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "xlacli",
            "compile",
            str(model),
            "--steps",
            "100",
            "--out",
            str(run),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_events(run, '"event": "step"', 2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "interrupted during step" in stderr
    report = json.loads((run / "report.json").read_text())
    assert 2 <= report["steps"] < 100 and report["error"]["kind"] == "interrupted"


@pytest.mark.e2e
def test_get_inputs_returning_none(tmp_path):
    model = tmp_path / "none.py"
    model.write_text(
        "import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n"
        "def get_inputs(step):\n    return None\n"
    )
    result = run_cli("compile", model, "--out", tmp_path / "run")
    assert_clean_error(result, 2, "get_inputs(0) returned None")


@pytest.mark.e2e
def test_sys_exit_in_user_code_is_the_models_failure(tmp_path):
    model = tmp_path / "exits.py"
    model.write_text(
        "import sys, torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n"
        "def get_inputs(step):\n    sys.exit(5)\n"
    )
    result = run_cli("compile", model, "--out", tmp_path / "run")
    assert_clean_error(result, 3, "get_inputs() raised SystemExit (sys.exit(5))")


@pytest.mark.e2e
def test_get_inputs_returning_plain_numbers_names_get_inputs(tmp_path):
    result = run_cli("compile", BAD / "int_inputs.py", "--out", tmp_path / "run")
    assert_clean_error(result, 2, "get_inputs(0) returned tuple (3, 4), which holds no tensor")
    assert "Linear.forward" not in result.stderr  # not torch's frames
