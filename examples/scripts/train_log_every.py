"""A training loop that logs its mean loss every few steps, the way
``transformers.Trainer`` does: the running loss is read, then reset in place,
and the lazy reset joins the next step's graph. That step's graph is a
second graph at a warm site, compiled once and cached each time a log step
comes round again: a periodic graph, not a steady-state recompile.

    python examples/scripts/train_log_every.py --steps 10 --log-every 3
    xlacli compile examples/scripts/train_log_every.py -- --steps 10 --log-every 3
"""

import argparse

import torch
import torch_xla
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--log-every", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=8)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    running_loss = torch.zeros((), device=device)
    for step in range(args.steps):
        features = torch.randn(args.batch_size, 16).to(device)
        labels = torch.randint(0, 4, (args.batch_size,)).to(device)
        loss = nn.functional.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        running_loss += loss.detach()
        torch_xla.sync()
        if (step + 1) % args.log_every == 0:
            mean = (running_loss / args.log_every).item()  # a graph of its own: the division
            print(f"step {step + 1}: mean loss {mean:.4f}")
            running_loss -= running_loss  # lazy: runs in the next step's graph


if __name__ == "__main__":
    main()
