"""A regression loop whose step is a ``torch_xla.compile`` function, with
``xm.optimizer_step`` and the loss logged every few steps. The last batch
of the epoch is short (the data does not divide by the batch size).

    python examples/scripts/train_compiled.py --batch-size 6
    xlacli compile examples/scripts/train_compiled.py -- --batch-size 6
"""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=6)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--log-every", type=int, default=3)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    features = torch.randn(args.samples, 16)
    targets = features.sum(dim=1, keepdim=True)

    @torch_xla.compile
    def train_step(x, y):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        xm.optimizer_step(optimizer)
        return loss

    for step, start in enumerate(range(0, args.samples, args.batch_size)):
        x = features[start : start + args.batch_size].to(device)
        y = targets[start : start + args.batch_size].to(device)
        loss = train_step(x, y)
        if step % args.log_every == 0:
            print(f"step {step} loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
