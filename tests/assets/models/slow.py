"""Slow steps (a sleep on the host), to interrupt a profile midway."""

import time

import torch
from torch import nn


class Slow(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        time.sleep(0.2)
        return self.linear(x).relu()


def get_model() -> nn.Module:
    return Slow()


def get_inputs(step: int) -> torch.Tensor:
    return torch.ones(4, 16)
