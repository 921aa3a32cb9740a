"""Compile one GPT-2-like training step with torch_xla on CPU and dump its HLO.

Run by ``make_inputs.py`` in a child process (it sets ``PJRT_DEVICE``,
``XLA_HLO_DEBUG`` and ``XLA_FLAGS``); written with plain ``torch.nn`` so that
it needs nothing beyond torch and torch_xla. ``--relu-layer N`` swaps the MLP
activation of block N from GELU to ReLU: the one-layer change the benchmark
diffs against the unchanged model.
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F
import torch_xla
from torch import nn


class Block(nn.Module):
    def __init__(self, d_model: int, heads: int, activation: nn.Module, dropout: float):
        super().__init__()
        self.heads = heads
        self.dropout = nn.Dropout(dropout)
        self.ln1 = nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.ln2 = nn.LayerNorm(d_model)
        self.fc = nn.Linear(d_model, 4 * d_model)
        self.activation = activation
        self.out = nn.Linear(4 * d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, seq, d_model = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d_model, dim=2)
        q, k, v = (t.view(batch, seq, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        causal = torch.ones(seq, seq, device=x.device, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        weights = self.dropout(F.softmax(scores, dim=-1))
        attention = (weights @ v).transpose(1, 2).reshape(batch, seq, d_model)
        x = x + self.dropout(self.proj(attention))
        return x + self.dropout(self.out(self.activation(self.fc(self.ln2(x)))))


class GPT(nn.Module):
    def __init__(self, vocab: int, seq: int, layers: int, relu_layer: int, dropout: float):
        super().__init__()
        d_model, heads = 768, 12
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Embedding(seq, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(d_model, heads, nn.ReLU() if index == relu_layer else nn.GELU(), dropout)
            for index in range(layers)
        )
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(idx.size(1), device=idx.device)
        x = self.dropout(self.tokens(idx) + self.positions(positions))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--relu-layer", type=int, default=-1)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--vocab", type=int, default=50257)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--clip", type=float, default=0.0, help="clip gradients to this norm")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = GPT(args.vocab, args.seq, args.layers, args.relu_layer, args.dropout).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    idx = torch.randint(0, args.vocab, (1, args.seq)).to(device)
    for _ in range(2):
        optimizer.zero_grad()
        logits = model(idx[:, :-1].contiguous())
        loss = F.cross_entropy(logits.reshape(-1, args.vocab), idx[:, 1:].reshape(-1))
        loss.backward()
        if args.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        torch_xla.sync()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
