"""The graph-size axis: a decoder-only stack at tiny widths, trained with Adam (issue 40).

    python benchmarks/scale/decoder.py --layers 50                  # bare
    xlacli compile benchmarks/scale/decoder.py -- --layers 50       # the same script under xlacli

Shaped like pytorch/xla's ``examples/train_decoder_only_base.py`` (its
``decoder_only_model.py``: RMS norms, causal self-attention, a gated MLP, a
language-model head), at widths small enough that the graph's size comes from
its depth: each layer adds about 1,300 IR ops to the training step's graph.
Five steps, ``torch_xla.sync()`` after each: three distinct graphs (the first
step, Adam's first update with its state, the steady step).
"""

from __future__ import annotations

import argparse

import torch
import torch_xla
from torch import nn
from torch.nn import functional

VOCAB = 256
HIDDEN = 64
HEADS = 4
MLP = 128
SEQUENCE = 32
BATCH = 4


class RmsNorm(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, _ = x.shape

        def heads(t: torch.Tensor) -> torch.Tensor:
            return t.view(batch, length, HEADS, HIDDEN // HEADS).transpose(1, 2)

        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        scores = q @ k.transpose(-2, -1) / (HIDDEN // HEADS) ** 0.5
        mask = torch.ones(length, length, device=x.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        return self.o(out.transpose(1, 2).reshape(batch, length, HIDDEN))


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention_norm = RmsNorm(HIDDEN)
        self.attention = Attention()
        self.mlp_norm = RmsNorm(HIDDEN)
        self.gate = nn.Linear(HIDDEN, MLP, bias=False)
        self.up = nn.Linear(HIDDEN, MLP, bias=False)
        self.down = nn.Linear(MLP, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x))
        h = self.mlp_norm(x)
        return x + self.down(functional.silu(self.gate(h)) * self.up(h))


class Decoder(nn.Module):
    def __init__(self, layers: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(layers))
        self.norm = RmsNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = Decoder(args.layers).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    generator = torch.Generator().manual_seed(0)
    for _ in range(args.steps):
        tokens = torch.randint(0, VOCAB, (BATCH, SEQUENCE + 1), generator=generator).to(device)
        optimizer.zero_grad(set_to_none=True)
        logits = model(tokens[:, :-1])
        loss = functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    main()
