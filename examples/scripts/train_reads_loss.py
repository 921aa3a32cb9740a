"""A training loop whose every step waits on the device: it reads the loss
(``loss.item()``) to log it, so the host blocks until the step's graph has
run. ``xlacli profile`` shows that wait as its own row of the host timeline.

    python examples/scripts/train_reads_loss.py --steps 8
    xlacli profile examples/scripts/train_reads_loss.py -- --steps 8
"""

import argparse

import torch
import torch_xla
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=16)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(
        nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 8)
    )
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = []
    for _step in range(args.steps):
        inputs = torch.randn(args.batch_size, 64).to(device)
        loss = model(inputs).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch_xla.sync()
        losses.append(loss.item())  # the host waits for the step's graph here
    print(f"{len(losses)} steps, last loss {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
