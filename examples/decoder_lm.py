"""A decoder-only language model written out by hand: causal self-attention
and a feed-forward block per layer, each at a line of this file, so a
profile's "time by user line" table names them (forward and backward).

xlacli profile examples/decoder_lm.py --train
"""

import math

import torch
from torch import nn

VOCAB = 256
SEQ_LEN = 32
BATCH = 2
D_MODEL = 64


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, self.heads, -1).unbind(dim=2)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d_model // self.heads)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        mixed = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(batch, seq, d_model)
        return self.out(mixed)


class Block(nn.Module):
    def __init__(self, d_model: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        x = x + self.ff(self.norm2(x))
        return x


class DecoderLM(nn.Module):
    def __init__(self, layers: int = 2, heads: int = 4):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D_MODEL)
        self.position = nn.Parameter(torch.zeros(1, SEQ_LEN, D_MODEL))
        self.blocks = nn.ModuleList(Block(D_MODEL, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(D_MODEL)
        self.lm_head = nn.Linear(D_MODEL, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens) + self.position[:, : tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return DecoderLM()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randint(0, VOCAB, (BATCH, SEQ_LEN), generator=generator)


def loss_fn(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Next-token prediction, for --train."""
    return nn.functional.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
