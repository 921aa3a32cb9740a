"""The training row: three linear layers, SGD with momentum, one graph every step.

xlacli compile benchmarks/scale/train_step.py --steps 1000
"""

from __future__ import annotations

import torch
from torch import nn

BATCH = 8
FEATURES = 64


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(FEATURES, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)
    )


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(BATCH, FEATURES, generator=torch.Generator().manual_seed(step))


_optimizers: dict[int, torch.optim.Optimizer] = {}


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    # One optimizer per model, made on the first step (the model is on the device by then).
    optimizer = _optimizers.setdefault(
        id(model), torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    )
    optimizer.zero_grad(set_to_none=True)
    loss = model(batch).logsumexp(dim=1).mean()
    loss.backward()
    optimizer.step()
    return loss
