"""A torch.compile model whose forward reads a Python value the loop
changes: ``model.scale`` is set from a schedule at step 3. Dynamo guards the
compiled frame on that value, the guard fails, Dynamo traces the frame again
and torch_xla compiles a new graph.

    python examples/scripts/compiled/guard_value.py --steps 5
    xlacli compile examples/scripts/compiled/guard_value.py -- --steps 5

Expected: one steady-state recompile, ``dynamo_guard``, at the line in
``forward`` that reads ``self.scale``, with the loop's assignment as ``also``.
Fix: keep the value in a tensor (a buffer), so it is a graph input.
"""

import argparse

import torch
import torch_xla
from torch import nn


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)
        self.scale = 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.proj(x))
        return h * self.scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch_xla.device()
    model = Scaled().to(device)
    compiled = torch.compile(model, backend="openxla")
    for step in range(args.steps):
        if step == 3:
            model.scale = 0.5
        x = torch.randn(4, 16).to(device)
        with torch.no_grad():
            compiled(x)
        torch_xla.sync()


if __name__ == "__main__":
    main()
