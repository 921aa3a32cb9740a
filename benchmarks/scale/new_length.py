"""The recompile storm: a new sequence length every step, so every step compiles.

xlacli compile benchmarks/scale/new_length.py --steps 100
"""

from __future__ import annotations

import torch
from torch import nn

FEATURES = 32


class Pool(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(FEATURES, FEATURES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.proj(x)).mean(dim=1)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Pool()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(2, step + 1, FEATURES, generator=generator)  # length step+1: always new
