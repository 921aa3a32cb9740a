"""A classifier trained over a small dataset in batches of 8: the last batch of each
epoch has 4 rows, the only odd size the model sees.

    xlacli compile tests/assets/models/advice/last_batch.py --steps 6
"""

from __future__ import annotations

import torch
from torch import nn

FEATURES = torch.randn(20, 16, generator=torch.Generator().manual_seed(0))
LABELS = torch.randint(0, 3, (20,), generator=torch.Generator().manual_seed(1))
BATCH = 8
OPTIMIZERS: dict[int, torch.optim.Optimizer] = {}


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(16, 32)
        self.out = nn.Linear(32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(x)))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Classifier()


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    batches_per_epoch = -(-len(FEATURES) // BATCH)
    start = (step % batches_per_epoch) * BATCH
    return FEATURES[start : start + BATCH], LABELS[start : start + BATCH]


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    features, labels = batch
    optimizer = OPTIMIZERS.setdefault(id(model), torch.optim.SGD(model.parameters(), lr=0.1))
    loss = nn.functional.cross_entropy(model(features), labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss
