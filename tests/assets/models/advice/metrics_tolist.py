"""A classifier whose step hands its predictions to a metrics helper of a library
(transformers' ``to_py_obj``, which calls ``.tolist()``): torch_xla copies them
from the device for the user, inside the library.

    xlacli compile tests/assets/models/advice/metrics_tolist.py --steps 4
"""

from __future__ import annotations

import torch
from torch import nn
from transformers.utils.generic import to_py_obj

OPTIMIZERS: dict[int, torch.optim.Optimizer] = {}
ACCURACY: list[float] = []


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3))


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(8, 16, generator=generator), torch.randint(0, 3, (8,), generator=generator)


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    features, labels = batch
    optimizer = OPTIMIZERS.setdefault(id(model), torch.optim.SGD(model.parameters(), lr=0.1))
    logits = model(features)
    loss = nn.functional.cross_entropy(logits, labels)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    predictions = to_py_obj(logits.argmax(-1))  # the metrics library's read
    hits = sum(p == t for p, t in zip(predictions, labels.tolist(), strict=True))
    ACCURACY.append(hits / len(predictions))
    return loss
