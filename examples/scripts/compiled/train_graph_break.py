"""A torch.compile training loop whose loss function breaks the graph:
it prints the loss with ``.item()`` inside the compiled function, so Dynamo
stops the FX graph there, runs it, and resumes in a new frame.

    python examples/scripts/compiled/train_graph_break.py --steps 4
    xlacli compile examples/scripts/compiled/train_graph_break.py -- --steps 4

Expected: the graph break with its reason (``Tensor.item()``) and its line,
the resumed frame's first graph explained as ``graph_break`` at that line.
Fix: log outside the compiled function (return the loss and read it there,
every N steps), or keep the value on the device.
"""

import argparse

import torch
import torch_xla
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="openxla")
    def train_step(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        if loss.item() > 100.0:  # graph break: Tensor.item()
            loss = loss / 10
        return loss * 2

    for _ in range(args.steps):
        x = torch.randn(8, 16).to(device)
        y = torch.randn(8, 1).to(device)
        optimizer.zero_grad()
        loss = train_step(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    main()
