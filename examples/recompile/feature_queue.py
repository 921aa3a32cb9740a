"""graph_structure: a feature queue that grows by one batch per step.

    xlacli compile examples/recompile/feature_queue.py --steps 5

A contrastive loss compares each batch with the features of earlier batches,
kept in a Python list and joined with torch.cat: each step the cat has one
more [8,16] operand (and a larger result) until the queue is full, so the
graph changes every step. The explanation names the tensor torch.cat gained,
not the scalar of the temperature on the next line.
Fix: preallocate the queue as one fixed-size tensor (a ring buffer written
with index_copy_) and mask the slots not yet filled.
"""

import torch
from torch import nn

QUEUE: list[torch.Tensor] = []
QUEUE_BATCHES = 4
TEMPERATURE = 0.1


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(32, 16)


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 32, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    features = nn.functional.normalize(model(batch), dim=1)
    bank = torch.cat([features.detach(), *QUEUE])
    logits = features @ bank.T / TEMPERATURE
    loss = logits.logsumexp(dim=1).mean()
    QUEUE.insert(0, features.detach())
    del QUEUE[QUEUE_BATCHES:]
    return loss
