"""A model whose sequence length changes between steps: every new length is a
new graph, and a new compile.

    xlacli compile examples/dynamic_shapes.py --steps 4

Steps 0 and 1 use 16 tokens, step 2 uses 24, step 3 uses 16 again (cached).
The fix is to pad or bucket lengths, so the model sees few distinct shapes.
"""

import torch
from torch import nn

VOCAB = 500
LENGTHS = (16, 16, 24, 16)


class Encoder(nn.Module):
    def __init__(self, d_model: int = 32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.mix = nn.Linear(d_model, d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = torch.tanh(self.mix(self.embed(tokens)))
        return hidden.mean(dim=1)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Encoder()


def get_inputs(step: int) -> torch.Tensor:
    length = LENGTHS[step % len(LENGTHS)]
    generator = torch.Generator().manual_seed(step)
    return torch.randint(0, VOCAB, (4, length), generator=generator)
