"""Eager mode with a ``torch_xla.compile`` step: setup and batch creation run
eagerly (each new op shape compiles a small graph), the training step is one
compiled graph. From step 4 the batch is longer, so the compiled step
compiles again: a steady-state recompile at the ``x = ...`` line. Every
other step a step closure checks the loss: it runs at the next step's first
sync (where torch_xla.compile has turned eager mode off, so it is a value read
of its own), part of that step, not a step of its own.

    python examples/scripts/compiled/train_eager.py --steps 6
    xlacli compile examples/scripts/compiled/train_eager.py -- --steps 6
"""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch import nn


def check_loss(step, loss):
    assert not torch.isnan(loss).item(), f"step {step}: the loss became NaN"


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
        loss = compiled_step(x, y)
        if step % 2 == 0:
            xm.add_step_closure(check_loss, args=(step, loss))


if __name__ == "__main__":
    main()
