"""Golden-capture model: a value read mid-step (.item()) and CPU fallback ops."""

import torch
from torch import nn


class ReadsValues(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        if y.sum().item() > 0:  # reads a value: the step is cut in two graphs
            y = y * 2
        nonzero = torch.nonzero(y > 0)  # data-dependent shape: runs on the CPU
        return y.sum() + nonzero.sum()


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return ReadsValues()


def get_inputs(step: int) -> torch.Tensor:
    return torch.ones(4, 8) * (step + 1)
