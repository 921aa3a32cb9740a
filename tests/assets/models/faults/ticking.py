"""A tiny model whose steps take a little host time, so a signal can land in
any phase of a run: starting, compiling, stepping, tracing."""

import time

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU())


def get_inputs(step: int) -> torch.Tensor:
    time.sleep(0.05)
    return torch.ones(2, 8) * step
