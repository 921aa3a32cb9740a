"""A healthy torch.compile training loop with fixed shapes: the step is
compiled by Dynamo's openxla backend, the batches all have one shape.

    python examples/scripts/compiled/train_dynamo.py --steps 6
    xlacli compile examples/scripts/compiled/train_dynamo.py -- --steps 6

Expected: the first step's graphs are warm-up compiles; no steady-state
recompile and no value read (the openxla bridge's own syncs are not the user's).
"""

import argparse

import torch
import torch_xla
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="openxla")
    def forward_loss(x, y):
        return nn.functional.mse_loss(model(x), y)

    for _step in range(args.steps):
        x = torch.randn(8, 16).to(device)
        y = x.sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = forward_loss(x, y)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    main()
