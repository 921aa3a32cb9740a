"""A small multi-layer perceptron: the quickstart model.

xlacli compile examples/mlp.py
"""

import torch
from torch import nn

BATCH = 8
FEATURES = 64


class MLP(nn.Module):
    def __init__(self, features: int = FEATURES, hidden: int = 128, classes: int = 10):
        super().__init__()
        self.layers = nn.Sequential(
            nn.Linear(features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return MLP()


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(BATCH, FEATURES, generator=generator)


def loss_fn(output: torch.Tensor, batch: torch.Tensor) -> torch.Tensor:
    return output.logsumexp(dim=1).mean()
