"""A loop with no sync inside unrolls into one graph that grows with its trip count
(issue 36, class 6): said in the verdict and at the loop's line, with the fix; a
stack of layers iterated in a module's ``forward`` is not such a loop."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

TRAIN_THEN_EVALUATE = """\
import torch
import torch_xla
from torch import nn


class Stack(nn.Module):
    def __init__(self, layers=10):
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(16, 16) for _ in range(layers))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = Stack().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    features, labels = torch.randn(240, 16), torch.randint(0, 4, (240,))
    for step in range(4):
        batch, target = features[:8].to(device), labels[:8].to(device)
        loss = nn.functional.cross_entropy(model(batch), target)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch_xla.sync()
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    with torch.no_grad():
        for start in range(0, 240, 8):  # accumulate, read once at the end
            batch = features[start : start + 8].to(device)
            target = labels[start : start + 8].to(device)
            correct += model(batch).argmax(dim=1).eq(target).sum()
    print(f"accuracy {correct.item() / 240:.3f}")


if __name__ == "__main__":
    main()
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unrolled")
    (folder / "train.py").write_text(TRAIN_THEN_EVALUATE)
    text = run_cli("compile", "train.py", "--out", "run", cwd=folder)
    assert text.code == 0, text.stderr
    return folder, text, json.loads((folder / "run" / "report.json").read_text())


def _line(folder, fragment):
    lines = (folder / "train.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if fragment in line)


def test_the_evaluation_loop_is_found_with_its_trip_count(run):
    folder, _, report = run
    [loop] = report["unrolled_loops"]
    assert loop["loop"].endswith(f"train.py:{_line(folder, 'for start in range')}")
    assert loop["body"].endswith(f"train.py:{_line(folder, 'correct += model(batch)')}")
    assert loop["iterations"] == 30
    graph = next(g for g in report["graphs"] if g["hash"] == loop["graph_hash"])
    assert loop["hlo_instructions"] == graph["hlo_instructions"] > 500


def test_the_verdict_and_the_report_say_it_with_the_fix(run):
    folder, text, _ = run
    verdict = text.stdout.splitlines()[0]
    assert verdict.startswith("no recompile after warm-up")
    assert f"a loop unrolled into one graph: train.py:{_line(folder, 'for start')}" in verdict
    assert "Loops unrolled into one graph (no sync inside):" in text.stdout
    assert "fix: call torch_xla.sync() once per iteration" in text.stdout


def test_layers_iterated_in_forward_are_not_a_loop_over_data(run):
    folder, _, report = run
    layers = f"train.py:{_line(folder, 'for block in self.blocks')}"
    assert not [loop for loop in report["unrolled_loops"] if loop["loop"].endswith(layers)]


def test_the_html_page_shows_it(run):
    folder, _, _ = run
    page = folder / "page.html"
    assert run_cli("report", folder / "run", "--output", page, cwd=folder).code == 0
    html = page.read_text()
    assert "Loops unrolled into one graph (1)" in html and "30 iterations traced" in html
