"""An eager-mode training loop that never syncs: every op runs at once, the
model's forward is a torch.compile graph, and the loss is printed every
other step. Nothing is ever pending, so no sync runs a graph: each optimizer
step ends a step.

    python examples/scripts/compiled/eager_loop.py --steps 6
    xlacli compile examples/scripts/compiled/eager_loop.py -- --steps 6

Expected: 6 steps (one per optimizer step), every compile counted (as
torch_xla's UncachedCompile counts them: eager op graphs and the compiled
forward and backward), each at its step; from step 4 the batch is longer, so
the eager ops meet new shapes and the compiled forward is traced again.
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
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model, backend="openxla")

    for step in range(args.steps):
        rows = 8 if step < 4 else 12
        x = torch.randn(rows, 16, device=device)
        target = torch.randn(rows, 4, device=device)
        optimizer.zero_grad()
        loss = ((compiled(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        if step % 2 == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
