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
SEQ_LEN = 8
DEPTH = int(os.environ.get("DECODER_DEPTH", "8"))
SCAN = os.environ.get("DECODER_SCAN") == "1"


class DecoderBlock(nn.Module):
    def __init__(self, width: int = WIDTH):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.norm2 = nn.LayerNorm(width)
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        q, k, v = self.qkv(self.norm1(hidden)).chunk(3, dim=-1)
        scores = (q @ k.transpose(-1, -2)) / WIDTH**0.5
        hidden = hidden + self.out(torch.softmax(scores, dim=-1) @ v)
        return hidden + self.down(torch.relu(self.up(self.norm2(hidden))))


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
