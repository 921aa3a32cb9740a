"""A small transformer stack trained with AdamW: forward, backward and the optimizer in one
step, so the compiled graph is mostly the backward pass and the update.

    xlacli compile tests/assets/models/advice/trained_stack.py --steps 2
"""

from __future__ import annotations

import torch
from torch import nn

WIDTH, VOCAB = 32, 64


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.attention = nn.MultiheadAttention(WIDTH, 2, batch_first=True)
        self.up = nn.Linear(WIDTH, 4 * WIDTH)
        self.down = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.down(nn.functional.gelu(self.up(x)))  # the MLP


class Stack(nn.Module):
    def __init__(self, layers: int = 2) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList(Block() for _ in range(layers))
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(tokens)
        for layer in self.layers:
            hidden = layer(hidden)
        return self.head(hidden)


OPTIMIZERS: dict[int, torch.optim.Optimizer] = {}


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Stack()


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    tokens = torch.randint(0, VOCAB, (4, 16), generator=generator)
    return tokens, torch.randint(0, VOCAB, (4, 16), generator=generator)


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    tokens, labels = batch
    optimizer = OPTIMIZERS.setdefault(id(model), torch.optim.AdamW(model.parameters(), lr=1e-3))
    logits = model(tokens)
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return loss


def deep_model() -> tuple[nn.Module, torch.Tensor]:
    """``trained_stack.py:deep_model --train --optimizer adamw``: 12 of the same layers,
    trained by xlacli's own loop."""
    torch.manual_seed(0)
    return Stack(layers=12), get_inputs(0)[0]
