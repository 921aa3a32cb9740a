"""A token classifier fed sentences of changing length: the tokens and their labels
change shape together, and the labels reach the loss as its target.

    xlacli compile tests/assets/models/advice/padded_labels.py --steps 8
"""

from __future__ import annotations

import torch
from torch import nn

VOCAB, CLASSES = 50, 5
LENGTHS = (12, 12, 9, 12, 7, 12, 10, 12)


class Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.classify = nn.Linear(16, CLASSES)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.classify(torch.tanh(self.embed(tokens)))


OPTIMIZERS: dict[int, torch.optim.Optimizer] = {}


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Tagger()


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    length = LENGTHS[step % len(LENGTHS)]
    tokens = torch.randint(0, VOCAB, (2, length), generator=generator)
    return tokens, torch.randint(0, CLASSES, (2, length), generator=generator)


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    tokens, labels = batch
    optimizer = OPTIMIZERS.setdefault(id(model), torch.optim.SGD(model.parameters(), lr=0.1))
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())  # the loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss
