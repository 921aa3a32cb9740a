"""A stack of identical decoder blocks in an ``nn.ModuleList``: XLA compiles every
layer's copy of the same ops, so compile time grows with depth.

    xlacli compile examples/advice/decoder_stack.py

The report's scan advice names ``self.layers`` and predicts what
``torch_xla.experimental.scan_layers`` would save; ``benchmarks/advice/scan.py``
applies it and measures. ``DECODER_DEPTH`` sets the layers; ``DECODER_SCAN=1``
applies the advice (the report then has no scan advice left to give).
"""

import os

import torch
from torch import nn

WIDTH = 32
HEADS = 4
SEQ_LEN = 8
DEPTH = int(os.environ.get("DECODER_DEPTH", "8"))
SCAN = os.environ.get("DECODER_SCAN") == "1"


class DecoderBlock(nn.Module):
    """Pre-norm attention (4 heads, rotary positions) and a gated MLP: many small ops,
    so each layer costs XLA real compile time even at this width."""

    def __init__(self, width: int = WIDTH, heads: int = HEADS):
        super().__init__()
        self.heads = heads
        self.norm1 = RMSNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm2 = RMSNorm(width)
        self.gate = nn.Linear(width, 2 * width)
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        batch, length, width = hidden.shape
        q, k, v = self.qkv(self.norm1(hidden)).chunk(3, dim=-1)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        q, k = rotate(q), rotate(k)
        scores = (q @ k.transpose(-1, -2)) / (width // self.heads) ** 0.5
        causal = torch.ones(length, length, dtype=torch.bool, device=hidden.device).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        attended = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(hidden.shape)
        hidden = hidden + self.out(attended)
        normed = self.norm2(hidden)
        gated = nn.functional.gelu(self.gate(normed), approximate="tanh") * self.up(normed)
        return hidden + self.down(gated)


class RMSNorm(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden * torch.rsqrt(hidden.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


def rotate(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding over the last dimension."""
    half = x.shape[-1] // 2
    position = torch.arange(x.shape[-2], device=x.device, dtype=x.dtype).unsqueeze(-1)
    frequency = 1.0 / 10000 ** (torch.arange(half, device=x.device, dtype=x.dtype) / half)
    angle = position * frequency
    first, second = x[..., :half], x[..., half:]
    return torch.cat(
        (first * angle.cos() - second * angle.sin(), first * angle.sin() + second * angle.cos()),
        dim=-1,
    )


class Decoder(nn.Module):
    def __init__(self, depth: int = DEPTH):
        super().__init__()
        self.embed = nn.Linear(WIDTH, WIDTH)
        self.layers = nn.ModuleList(DecoderBlock() for _ in range(depth))
        self.head = nn.Linear(WIDTH, WIDTH)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        hidden = self.embed(hidden)
        if SCAN:  # the advice applied: one layer's body, compiled once, in a loop
            from torch_xla.experimental.scan_layers import scan_layers

            hidden = scan_layers(self.layers, hidden)
        else:
            for layer in self.layers:
                hidden = layer(hidden)
        return self.head(hidden)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Decoder()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(2, SEQ_LEN, WIDTH, generator=generator)
