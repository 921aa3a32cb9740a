"""Telling a script from a model file, finding -m modules, and the settings a
script run carries (no torch: the parent's half)."""

from __future__ import annotations

import json

import pytest

from xlacli.capture.discover import ModelTarget, check_model_file, find_module_file, parse_target
from xlacli.config import load_config
from xlacli.errors import UsageError
from xlacli.run_folder.events import read_events
from xlacli.run_folder.request import CaptureRequest


def kind_of(tmp_path, text: str) -> str:
    path = tmp_path / "file.py"
    path.write_text(text)
    return check_model_file(parse_target(str(path))).kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("import torch\nfor i in range(3):\n    print(i)\n", "script"),
        ("model = build()\nfor batch in data:\n    model(batch)\n", "script"),  # no inputs
        ("model = build()\nexample_inputs = (1,)\n", "model"),
        ("def get_model():\n    pass\ndef get_inputs():\n    pass\n", "model"),
        ("setattr(args, 'lr', 1)\nprint(args)\n", "script"),  # setattr: judged by what is seen
        ("from helpers import *\n", "model"),  # may define get_model: the child decides
    ],
)
def test_a_file_with_neither_get_model_nor_model_is_a_script(tmp_path, text, kind):
    assert kind_of(tmp_path, text) == kind


def test_script_arguments_travel_with_the_target(tmp_path):
    path = tmp_path / "train.py"
    path.write_text("print(1)\n")
    target = check_model_file(ModelTarget(path, args=("--lr", "0.1")))
    assert (target.is_script, target.args) == (True, ("--lr", "0.1"))


def test_find_module_file_without_importing(tmp_path):
    package = tmp_path / "pkg"
    (package / "app").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('imported')\n")
    (package / "train.py").write_text("")
    (package / "app" / "__main__.py").write_text("")
    assert find_module_file("pkg.train", [str(tmp_path)]) == (package / "train.py").resolve()
    assert (
        find_module_file("pkg.app", ["/nowhere", str(tmp_path)])
        == (package / "app" / "__main__.py").resolve()
    )
    with pytest.raises(UsageError, match=r"no module named 'pkg\.missing'"):
        find_module_file("pkg.missing", [str(tmp_path)])
    with pytest.raises(UsageError, match="not a module name"):
        find_module_file("pkg/train.py", [str(tmp_path)])


def test_config_script_args_and_module(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.xlacli]\nmodel = "train.py"\nscript_args = ["--lr", "0.1"]\nmodule = "pkg.t"\n'
    )
    config = load_config(tmp_path)
    assert config.script_args == ("--lr", "0.1")
    assert config.module == "pkg.t"
    (tmp_path / "pyproject.toml").write_text('[tool.xlacli]\nscript_args = "--lr 0.1"\n')
    with pytest.raises(UsageError, match="script_args must be a list of strings"):
        load_config(tmp_path)


def test_requests_load_tolerantly(tmp_path):
    path = tmp_path / "request.json"
    old = {"model_path": "m.py", "model_entry": None, "steps": 2}  # before script mode
    path.write_text(json.dumps({**old, "a_future_field": 1}))
    request = CaptureRequest.load(path)
    assert (request.is_script, request.script_args, request.planned_steps(7)) == (False, [], 2)
    script = CaptureRequest("t.py", None, 0, target_kind="script", run_to_end=True)
    script.save(path)
    assert CaptureRequest.load(path).planned_steps(7) == 7


def test_the_tail_event_counts_among_metric_events(tmp_path):
    path = tmp_path / "events.jsonl"
    lines = [
        {"event": "setup", "counters": {}},
        {"event": "step", "step": 0, "counters": {"UncachedCompile": 1}},
        {"event": "tail", "step": None, "counters": {"ExecuteComputation": 1}},
        {"event": "end"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    log = read_events(path)
    events = list(log.metric_events)
    assert (
        events[0] is log.setup
        and events[-1] is log.tail
        and [e.step for e in events]
        == [
            None,
            0,
            None,
        ]
    )
    assert log.ended


def test_a_scripts_exit_code_is_its_failure_with_what_it_printed_last(tmp_path):
    """``sys.exit(2)`` (argparse's usage error) fails the run with the script's last
    lines; ``sys.exit(0)`` and ``sys.exit()`` are a normal end."""
    from types import SimpleNamespace

    from xlacli.child.script_target import _no_step_message, _script_exited
    from xlacli.errors import ModelError
    from xlacli.run_folder.request import RunPaths

    paths = RunPaths(tmp_path)
    paths.child_log.write_text(
        "FutureWarning: something\nusage: train.py [-h] --batch-size N\n"
        "train.py: error: the following arguments are required: --batch-size\n"
    )
    before_steps, later = SimpleNamespace(step=0), SimpleNamespace(step=3)
    for normal in (SystemExit(0), SystemExit(None)):
        _script_exited(normal, before_steps, paths)  # no error
    with pytest.raises(ModelError) as raised:
        _script_exited(SystemExit(2), before_steps, paths)
    assert "exited with SystemExit (sys.exit(2)) before any step ran" in str(raised.value)
    assert raised.value.details.splitlines() == [  # warnings left out
        "usage: train.py [-h] --batch-size N",
        "train.py: error: the following arguments are required: --batch-size",
    ]
    assert str(paths.child_log) in (raised.value.hint or "")
    with pytest.raises(ModelError, match="during step 3"):
        _script_exited(SystemExit("bad"), later, paths)
    assert "never synced a graph" in _no_step_message("train.py")


def test_a_missing_torchrun_variable_is_recognised():
    from xlacli.child.script_target import _missing_torchrun_variable

    assert _missing_torchrun_variable(KeyError("LOCAL_RANK"))
    assert not _missing_torchrun_variable(KeyError("HOME"))
    assert not _missing_torchrun_variable(ValueError("RANK"))
