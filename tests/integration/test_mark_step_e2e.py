"""A loop that syncs with ``xm.mark_step()`` (the newcomer pass of issue 38):
torch_xla 2.9 deprecates it, so the call goes through typing_extensions'
``wrapper`` before the sync; that frame is not the script's, and the loop was
never found: every step was setup, ``--steps N`` did not stop the script and
``profile`` traced nothing."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SCRIPT = textwrap.dedent(
    """
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm

    device = torch_xla.device()
    model = torch.nn.Linear(8, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(8):
        loss = model(torch.randn(16, 8).to(device)).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        xm.mark_step()
    print("ran to its end")
    """
)


@pytest.fixture
def script(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    return tmp_path


def test_mark_step_iterations_are_the_loop_and_steps_stop_it(script):
    result = run_cli("compile", "train.py", "--steps", "3", "--out", "run", cwd=script)
    assert result.code == 0, result.stderr
    report = json.loads((script / "run" / "report.json").read_text())
    assert report["steps"] == 3
    assert "ran to its end" not in (script / "run" / "child.log").read_text()
    assert all(e["cause"]["library_location"] is None for e in report["events"])


def test_profile_traces_a_mark_step_loop(script):
    result = run_cli(
        "profile", "train.py", "--steps", "2", "--warmup", "2", "--out", "run", cwd=script
    )
    assert result.code == 0, result.stderr
    summary = json.loads((script / "run" / "profile.json").read_text())
    assert summary["steps"] == 2, result.stdout
