"""unsynced_loop: a greedy decode loop that reads a value per token and never syncs.

    xlacli compile examples/recompile/unsynced_decode.py --steps 3

Each token checks `if (token == EOS).all()`: a value read, which runs the
graph so far. Nothing syncs inside the loop, so each read's graph holds
every token before it and grows: one compile per token, every step.
Fix: torch_xla.sync() once per iteration (then every iteration runs the same
graph), a fixed-size output buffer or static KV cache, torch_xla.compile
around the loop body.
"""

import torch
from torch import nn

VOCAB, EOS, NEW_TOKENS = 32, 0, 4


class TinyDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16)
        self.head = nn.Linear(16, VOCAB)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(tokens).mean(dim=1))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return TinyDecoder()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randint(1, VOCAB, (2, 4), generator=torch.Generator().manual_seed(step))


@torch.no_grad()
def step(model: nn.Module, prompt: torch.Tensor, step: int) -> torch.Tensor:
    tokens = prompt
    for _ in range(NEW_TOKENS):
        token = model(tokens).argmax(dim=-1, keepdim=True)
        tokens = torch.cat([tokens, token], dim=1)
        if (token == EOS).all():
            break
    return tokens
