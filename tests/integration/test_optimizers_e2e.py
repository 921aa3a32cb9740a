"""Optimizers beyond torch.optim's usual ones (issue 36, class 4): the state a
factored-moment optimizer (Adafactor) or a user's own optimizer (a Lion written in
the training script) makes at its first step becomes graph inputs: an expected
``optimizer_state`` compile, never a ``graph_structure`` "Python branch" to fix.
The child records where each stepped optimizer's code is (child/backward_calls.py)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

LOOP = """
def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = {optimizer}
    for step in range(6):
        features = torch.randn(8, 16).to(device)
        labels = torch.randint(0, 4, (8,)).to(device)
        loss = nn.functional.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch_xla.sync()


if __name__ == "__main__":
    main()
"""
HEADER = "import torch\nimport torch_xla\nfrom torch import nn\n\n"
LION = '''
class Lion(torch.optim.Optimizer):
    """The sign of an interpolated momentum, as its paper writes it."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.99)):
        super().__init__(params, dict(lr=lr, betas=betas))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)
                exp_avg = state["exp_avg"]
                update = exp_avg.mul(beta1).add(p.grad, alpha=1 - beta1).sign_()
                p.add_(update, alpha=-group["lr"])
                exp_avg.mul_(beta2).add_(p.grad, alpha=1 - beta2)

'''
SCRIPTS = {
    "adafactor": HEADER + LOOP.format(optimizer="torch.optim.Adafactor(model.parameters())"),
    "own_lion": HEADER + LION + LOOP.format(optimizer="Lion(model.parameters(), lr=1e-3)"),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_an_optimizers_first_state_is_expected_not_a_branch(tmp_path, name):
    (tmp_path / "train.py").write_text(SCRIPTS[name])
    result = run_cli("compile", "train.py", "--format", "json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    categories = [e["cause"]["category"] for e in report["events"]]
    assert "optimizer_state" in categories, categories
    assert "graph_structure" not in categories, categories
    assert report["steady_state_compiles"] == 0
    # The model's own lines are not taken for the optimizer's.
    state = next(e for e in report["events"] if e["cause"]["category"] == "optimizer_state")
    text = (tmp_path / "train.py").read_text().splitlines()
    line = int(state["cause"]["location"].rpartition(":")[2])
    assert "model(" not in text[line - 1]
