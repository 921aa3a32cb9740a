"""A script that fails in its second step, in its own function."""

import torch
import torch_xla


def check(value):
    raise ValueError(f"loss went bad: {value}")


device = torch_xla.device()
x = torch.ones(3, device=device)
for step in range(3):
    x = x * 2
    torch_xla.sync()
    if step == 1:
        check(step)
