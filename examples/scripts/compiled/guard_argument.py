"""A torch.compile function called with arguments that change between steps:
a Python number (``scale``, from a schedule) and a batch whose length
changes. Dynamo guards the compiled frame on each argument it received (the
number's value, the tensor's shape); when the caller passes another, the guard
fails, Dynamo traces the frame again and torch_xla compiles a new graph.

    python examples/scripts/compiled/guard_argument.py --steps 6
    xlacli compile examples/scripts/compiled/guard_argument.py -- --steps 6

Expected: two steady-state recompiles, both ``dynamo_guard``: at step 2 at the
line that reads ``scale``, and at step 4 at the line that first reads ``x``;
each with the caller's lines as ``also`` (the assignment in the loop, then the
call that passed it). Fix: pass the number as a tensor, and pad the batch to
one length (or mark the dimension dynamic).
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
    proj = nn.Linear(16, 16).to(device)

    @torch.compile(backend="openxla")
    def scaled(x, scale):
        h = torch.tanh(proj(x))
        return h * scale

    for step in range(args.steps):
        scale = 1.0 if step < 2 else 0.5
        rows = 4 if step < 4 else 6
        x = torch.randn(rows, 16).to(device)
        with torch.no_grad():
            scaled(x, scale)
        torch_xla.sync()


if __name__ == "__main__":
    main()
