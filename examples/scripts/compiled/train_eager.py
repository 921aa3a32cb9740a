"""Eager mode with a ``torch_xla.compile`` step: setup and batch creation run
eagerly (each new op shape compiles a small graph), the training step is one
compiled graph. From step 4 the batch is longer, so the compiled step
compiles again: a steady-state recompile at the ``x = ...`` line.

    python examples/scripts/compiled/train_eager.py --steps 6
    xlacli compile examples/scripts/compiled/train_eager.py -- --steps 6
"""

import argparse

import torch
import torch_xla
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()

    torch_xla.experimental.eager_mode(True)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def train_step(x, y):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    compiled_step = torch_xla.compile(train_step, full_graph=True, name="train_step")
    for step in range(args.steps):
        rows = 8 if step < 4 else 12
        x = torch.randn(rows, 16).to(device)
        y = torch.randn(rows, 1).to(device)
        compiled_step(x, y)


if __name__ == "__main__":
    main()
