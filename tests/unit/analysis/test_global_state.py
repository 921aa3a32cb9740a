"""A guard on torch's global state, at the user's lines (analysis/dynamo/global_state.py)."""

from __future__ import annotations

from xlacli.analysis.dynamo.global_state import changed_states, state_changed_at

SOURCE = """import torch


def evaluate(model, batches):
    model.eval()
    with torch.no_grad():
        for x in batches:
            out = model(x)
    return out


@torch.inference_mode()
def predict(model, x):
    return model(x)


def mixed(model, x):
    with torch.autocast("xla", dtype=torch.bfloat16):
        return model(x)
"""


def test_the_states_a_guard_names():
    assert changed_states("GLOBAL_STATE changed: grad_mode") == ("grad_mode",)
    assert changed_states("GLOBAL_STATE changed: grad_mode, autocast") == ("grad_mode", "autocast")
    assert changed_states("tensor 'x' size mismatch at index 0") == ()
    assert changed_states(None) == ()


def test_the_block_or_decorator_that_changed_it(tmp_path):
    path = tmp_path / "loop.py"
    path.write_text(SOURCE)
    assert state_changed_at(f"{path}:8", ("grad_mode",)) == f"{path}:6"
    assert state_changed_at(f"{path}:14", ("grad_mode",)) == f"{path}:12"
    assert state_changed_at(f"{path}:19", ("autocast",)) == f"{path}:18"
    assert state_changed_at(f"{path}:19", ("grad_mode",)) is None  # autocast is not grad mode
    assert state_changed_at(f"{tmp_path}/missing.py:3", ("grad_mode",)) is None
