"""A value read already inside ``xm.add_step_closure`` is not told to move into one
(issue 36, class 5): on a loop written afresh that logs from a closure which computes
before it reads."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SCRIPT = """\
import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch import nn


def main():
    device = torch_xla.device()
    model = nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(6):
        features = torch.randn(4, 8).to(device)
        loss = model(features).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        xm.add_step_closure(lambda l=loss: print(f"loss {(l * 100).round().item()}"))
        torch_xla.sync()


if __name__ == "__main__":
    main()
"""


def test_a_read_in_a_step_closure_is_told_what_the_closure_should_read(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    result = run_cli("compile", "train.py", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    [read] = [e for e in report["events"] if e["cause"]["category"] == "host_sync"]
    cause = read["cause"]
    assert cause["location"].endswith("train.py:17")
    assert "inside a step closure" in cause["detail"]
    assert cause["hint"].startswith("compute what the closure reads in the step")
    assert "log with xm.add_step_closure" not in json.dumps(cause)
    [cost] = report["value_read_costs"]
    assert cost["fix"] == cause["hint"]
    assert "log it in a step closure" not in cost["fix"]
