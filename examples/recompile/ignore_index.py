"""Healthy: unlabelled tokens are masked with ignore_index, not removed.

    xlacli compile examples/recompile/ignore_index.py --steps 5

The number of labelled tokens changes every step (like masked_labels.py),
but cross_entropy(ignore_index=-100) masks them inside a fixed-shape loss:
no shape depends on the labels, and nothing compiles after warm-up.
"""

import torch
from torch import nn

IGNORE = -100
UNLABELLED = (0, 2, 2, 5, 2)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(50, 16), nn.Linear(16, 8))


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, 50, (4, 8), generator=generator)
    labels = torch.randint(0, 8, (4, 8), generator=generator)
    labels.view(-1)[: UNLABELLED[step % len(UNLABELLED)]] = IGNORE
    return tokens, labels


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    tokens, labels = batch
    logits = model(tokens).flatten(0, 1)
    loss = nn.functional.cross_entropy(logits, labels.flatten(), ignore_index=IGNORE)
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
