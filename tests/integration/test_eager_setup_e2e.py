"""Eager mode (issue 36, class 3): the ops run eagerly while the model is built are
the setup, not the loop's step 0, and different parameters' ops are never compared
as if one tensor changed shape. On a script written afresh the way torch_xla's eager
docs write one: eager_mode(True), the model moved to the device, a compiled step."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SCRIPT = """\
import torch
import torch_xla
from torch import nn

torch_xla.experimental.eager_mode(True)


def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 2)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)

    def train_step(features, targets):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(features), targets)
        loss.backward()
        optimizer.step()
        return loss

    step_fn = torch_xla.compile(train_step)
    for step in range(6):
        rows = 4 if step < 4 else 6
        features = torch.randn(rows, 12).to(device)
        targets = torch.randn(rows, 2).to(device)
        step_fn(features, targets)


if __name__ == "__main__":
    main()
"""


def test_eager_ops_while_the_model_is_built_are_setup(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    result = run_cli("compile", "train.py", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    lines = (tmp_path / "train.py").read_text().splitlines()
    built = next(n for n, line in enumerate(lines, 1) if ".to(device)" in line and "model" in line)
    at_build = [e for e in report["events"] if e["cause"]["location"].endswith(f":{built}")]
    assert at_build, report["events"]
    for event in at_build:  # one graph per parameter's shape: expected
        assert event["phase"] == "setup" and not event["steady_state"], event
        assert event["cause"]["category"] == "first_compile", event
        assert "while the model is built" in event["cause"]["detail"]
    # Nowhere is one op's graph compared with another's as a shape that changed.
    assert not [e for e in report["events"] if e["cause"]["category"] == "intermediate_shape"]
    # The longer batch from step 4 is an input shape, at the lines that moved it.
    later = [e for e in report["events"] if e["step"] == 4]
    assert later and all(e["cause"]["category"] == "input_shape" for e in later), later
