"""An evaluation loop that never syncs, after a training loop that syncs every step
(issue 36, class 1), on a script written the way tutorials write it: the
evaluation's first read is a new phase, not a steady-state recompile; its short
last batch is a shape, not "another read on this line"; and the next epoch's first
training step, which computed the last batch's ``pred`` (alive, never synced), is
``carried_over`` at the line that made it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SCRIPT = """\
import torch
import torch_xla
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def data(n, seed):
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(n, 16, generator=g), torch.randint(0, 4, (n,), generator=g))


def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = DataLoader(data(64, 0), batch_size=8)
    test_loader = DataLoader(data(36, 1), batch_size=8)
    for epoch in range(2):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            torch_xla.sync()
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in test_loader:
                x, y = x.to(device), y.to(device)
                pred = model(x).argmax(dim=1)
                correct += pred.eq(y).sum().item()
        print(f"epoch {epoch} accuracy {correct / 36:.3f}")


if __name__ == "__main__":
    main()
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unsynced_eval")
    (folder / "train.py").write_text(SCRIPT)
    result = run_cli("compile", "train.py", "--format", "json", cwd=folder)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _line(fragment: str) -> str:
    number = next(n for n, line in enumerate(SCRIPT.splitlines(), 1) if fragment in line)
    return f"train.py:{number}"


def _at(report, fragment):
    return [e for e in report["events"] if e["cause"]["location"].endswith(_line(fragment))]


def test_steps_are_the_training_iterations(report):
    assert report["steps"] == 16  # two epochs of 8 batches; the evaluation reads are not steps


def test_the_evaluations_first_read_is_a_new_phase(report):
    reads = _at(report, "correct += pred.eq(y)")
    assert reads and all(e["phase"] == "new_phase" and not e["steady_state"] for e in reads)
    assert reads[0]["cause"]["category"] == "host_sync"


def test_its_short_last_batch_is_a_shape_not_another_read(report):
    last = _at(report, "correct += pred.eq(y)")[-1]
    assert last["cause"]["category"] in ("input_shape", "intermediate_shape"), last
    assert "s64[8] -> s64[4]" in last["cause"]["detail"] or "[8," in last["cause"]["detail"]
    assert "another value read" not in json.dumps(report["events"])


def test_the_next_training_step_computed_the_live_pred(report):
    [carried] = [e for e in report["events"] if e["cause"]["category"] == "carried_over"]
    assert carried["cause"]["location"].endswith(_line("pred = model(x).argmax"))
    assert carried["steady_state"]  # a real extra compile, with its fix
    assert "torch_xla.sync()" in carried["cause"]["hint"] and "del" in carried["cause"]["hint"]
