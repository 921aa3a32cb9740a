"""A small transformer encoder written with torch.nn, on token ids.

xlacli compile examples/transformer.py
"""

import torch
from torch import nn

VOCAB = 1000
SEQ_LEN = 32
BATCH = 2


class TinyTransformer(nn.Module):
    def __init__(self, d_model: int = 64, heads: int = 4, layers: int = 2):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, d_model)
        self.position = nn.Parameter(torch.zeros(1, SEQ_LEN, d_model))
        layer = nn.TransformerEncoderLayer(
            d_model, heads, dim_feedforward=4 * d_model, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(tokens) + self.position[:, : tokens.shape[1]]
        return self.lm_head(self.norm(self.encoder(hidden)))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return TinyTransformer()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randint(0, VOCAB, (BATCH, SEQ_LEN), generator=generator)


def loss_fn(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token prediction, for --train."""
    return nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
