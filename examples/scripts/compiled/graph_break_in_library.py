"""A torch.compile training loop that breaks the graph inside a library:
the compiled step logs an image grid of its activations with torchvision's
``make_grid(..., normalize=True)``, which reads ``float(t.min())`` from the
tensor (``torchvision/utils.py``). Dynamo traces into the library, stops the
FX graph there and resumes in a new frame.

    python examples/scripts/compiled/graph_break_in_library.py --steps 4
    xlacli compile examples/scripts/compiled/graph_break_in_library.py -- --steps 4

Expected: the graph break at this file's ``make_grid`` line (the user's call),
inside ``torchvision/utils.py`` (where Dynamo broke), with its reason
(``Tensor.item()``); the resumed frame's first graph explained as
``graph_break`` at the same lines.
Fix: make the grid outside the compiled function, every N steps.
"""

import argparse

import torch
import torch_xla
import torchvision
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Conv2d(3, 3, 3, padding=1), nn.ReLU()).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    @torch.compile(backend="openxla")
    def train_step(x):
        features = model(x)
        grid = torchvision.utils.make_grid(features, nrow=2, normalize=True)  # graph break
        return features.square().mean() + 0.0 * grid.sum()

    for _ in range(args.steps):
        x = torch.randn(4, 3, 8, 8).to(device)
        optimizer.zero_grad()
        loss = train_step(x)
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    main()
