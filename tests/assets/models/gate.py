"""The CI gate's test model. Tests copy it and edit RECOMPILE_FROM or READ_VALUE."""

import torch
from torch import nn

RECOMPILE_FROM = 1000  # from this step on, a Python branch adds ops (a recompile)
READ_VALUE = False  # True: read a value mid-step (a host sync)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(4, 8, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    with torch.no_grad():
        out = model(batch)
        if step >= RECOMPILE_FROM:
            out = out * 2 + 1  # the regression the gate must name
        if READ_VALUE and out.sum() > 0:
            out = out - 1
        return out
