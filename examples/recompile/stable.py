"""A stable model: compiled in the first step, cached ever after.

    xlacli compile examples/recompile/stable.py --steps 6

Expect one first_compile and zero steady-state compiles: no false alarms.
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(4, 32, generator=torch.Generator().manual_seed(step))
