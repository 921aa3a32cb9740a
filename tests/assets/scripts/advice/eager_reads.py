"""An eager-mode training loop that reads its loss every step: every op has run
by the time of the read, so no graph is forced, yet each read waits for the
device and copies the value.

    xlacli compile tests/assets/scripts/advice/eager_reads.py -- --steps 4
"""

import argparse

import torch
import torch_xla
from torch import nn


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    torch_xla.experimental.eager_mode(True)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for _ in range(args.steps):
        x = torch.randn(8, 16, device=device)
        target = torch.randn(8, 4, device=device)
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        history.append(loss.item())  # the read
    print(f"final loss {history[-1]:.4f}")


if __name__ == "__main__":
    main()
