"""A torch.compile model trained, then evaluated under ``torch.no_grad()`` at
each epoch's end: Dynamo guards the grad mode the forward was traced under, so
the first evaluation call traces it again (``GLOBAL_STATE changed: grad_mode``)
and torch_xla compiles the evaluation graph.

    python examples/scripts/compiled/eval_no_grad.py --epochs 2
    xlacli compile examples/scripts/compiled/eval_no_grad.py -- --epochs 2

Expected: one Dynamo recompile, at the evaluation's ``model(x)`` call (no line
of ``forward`` reads the grad mode), with the ``with torch.no_grad():`` line as
where the state changed; a new phase, not a steady-state recompile; the second
epoch compiles nothing.
"""

import argparse

import torch
import torch_xla
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(16, 32)
        self.dropout = nn.Dropout(0.1)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(self.dropout(torch.relu(self.hidden(x))))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = torch.compile(Classifier().to(device), backend="openxla")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(args.epochs):
        model.train()
        for _ in range(4):
            x = torch.randn(8, 16).to(device)
            y = torch.randint(0, 4, (8,)).to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            torch_xla.sync()
        model.eval()
        with torch.no_grad():
            for _ in range(2):
                x = torch.randn(8, 16).to(device)
                logits = model(x)
                torch_xla.sync()
    print("last logits", tuple(logits.shape))


if __name__ == "__main__":
    main()
