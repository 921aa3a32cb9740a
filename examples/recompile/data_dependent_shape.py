"""data_dependent_shape: boolean-mask indexing, whose size depends on the data.

    xlacli compile examples/recompile/data_dependent_shape.py --steps 5

torch.nonzero and x[mask] run on the CPU (a fallback) and return a tensor
whose shape depends on the values: a new shape, a new graph.
Fix: keep shapes static: torch.where(mask, x, 0) and masked sums.
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.linear(x)
        positive = hidden[hidden > 0]  # how many are positive depends on the data
        return positive.sum()


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Model()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))
