"""A model out of memory, a device that cannot start, and a model's other
mistakes: each says its real cause, with the right exit code (issue 9,
items 3, 5, 6, 7, 16)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES, assert_clean_error, run_cli
from tests.faults.conftest import FAULT_MODELS

pytestmark = [pytest.mark.faults, pytest.mark.e2e]


def test_out_of_memory_moving_the_model_is_the_models_failure(tmp_path):
    run = tmp_path / "run"
    result = run_cli("compile", FAULT_MODELS / "out_of_memory.py", "--out", run)
    assert_clean_error(result, 3, "moving the model to the XLA device raised", "do not fit")
    assert "can't allocate memory" in result.stderr
    assert json.loads((run / "report.json").read_text())["error"]["kind"] == "model"


@pytest.mark.parametrize(
    ("device", "cause"),
    [("TPU", "libtpu not found"), ("NOSUCHDEVICE", "No PjRtPlugin registered for: NOSUCHDEVICE")],
)
def test_a_device_that_cannot_start_shows_torch_xlas_message(tmp_path, device, cause):
    run = tmp_path / "run"
    result = run_cli("compile", EXAMPLES / "mlp.py", "--out", run, env={"PJRT_DEVICE": device})
    assert_clean_error(result, 4, f"PJRT_DEVICE={device} could not start", cause)
    assert "SIGABRT" not in result.stderr and "Fatal Python error" not in result.stderr
    assert run_cli("report", run).code == 0


def test_profile_traces_a_bounded_window(tmp_path):
    run = tmp_path / "run"
    result = run_cli(
        "profile", EXAMPLES / "mlp.py", "--steps", "6", "--warmup", "1",
        "--max-trace-steps", "2", "--out", run, "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert "tracing the first 2 of 6 steps" in result.stderr
    summary = json.loads(result.stdout)
    assert (summary["steps"], summary["warmup"]) == (2, 1)
    assert json.loads((run / "report.json").read_text())["steps"] == 7  # all of them ran


def test_forward_returning_none_says_why_nothing_compiled(tmp_path):
    model = tmp_path / "none.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        x * 2\n"
        "def get_model():\n    return M()\n"
        "def get_inputs(step):\n    return torch.ones(2)\n"
    )
    result = run_cli("compile", model, "--out", tmp_path / "run")
    assert result.code == 0, result.stderr
    assert "forward() returned None: nothing was computed on the XLA device" in result.stderr
    assert "return the output tensor(s)" in result.stderr


STEP_MODEL = """
import torch
def get_model():
    return torch.nn.Linear(2, 2)
def get_inputs(step):
    return torch.ones(1, 2)
def step(model, batch, step):
    return model(batch)
"""


def test_train_is_said_to_be_ignored_when_the_file_defines_step(tmp_path):
    model = tmp_path / "own_step.py"
    model.write_text(STEP_MODEL)
    result = run_cli("compile", model, "--train", "--out", tmp_path / "run", "--steps", "1")
    assert result.code == 0, result.stderr
    assert "--train and --optimizer are ignored: the model file defines step()" in result.stderr


LABELLED = """
import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(2, 1)
    def forward(self, x):
        return self.linear(x)
def get_model():
    return M()
def get_inputs(step):
    return (torch.ones(4, 2), torch.zeros(4, 1))
def loss_fn(output, batch):
    return ((output - batch[1]) ** 2).mean()
"""


def test_labels_sent_to_forward_get_a_hint_and_forward_inputs_fixes_it(tmp_path):
    model = tmp_path / "labelled.py"
    model.write_text(LABELLED)
    result = run_cli("compile", model, "--train", "--steps", "1", "--out", tmp_path / "a")
    assert_clean_error(result, 3, "positional argument", "define forward_inputs(batch)")
    model.write_text(LABELLED + "def forward_inputs(batch):\n    return batch[0]\n")
    result = run_cli("compile", model, "--train", "--steps", "1", "--out", tmp_path / "b")
    assert result.code == 0, result.stderr
