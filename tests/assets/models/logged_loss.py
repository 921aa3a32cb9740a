"""A long training loop that reads its loss on the host at every step: two
graphs run per step (the read's forward, then the step), every step the same.

    xlacli compile tests/assets/models/logged_loss.py --steps 60

torch_xla's debug log gets two blocks per step; the child folds the repeats
(issue 23), and the report still counts each read in its step.
"""

from __future__ import annotations

import torch
from torch import nn

LOSSES: list[float] = []
_optimizers: dict[int, torch.optim.Optimizer] = {}


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(4, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    optimizer = _optimizers.setdefault(id(model), torch.optim.SGD(model.parameters(), lr=0.01))
    loss = model(batch).pow(2).mean()
    LOSSES.append(loss.item())  # the value read: a graph of its own
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss
