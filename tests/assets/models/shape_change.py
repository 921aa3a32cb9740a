"""Golden-capture model: the batch grows at step 2, then shrinks back (cached)."""

import torch
from torch import nn

SIZES = (4, 4, 6, 4)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def get_inputs(step: int) -> torch.Tensor:
    return torch.ones(SIZES[step % len(SIZES)], 16)
