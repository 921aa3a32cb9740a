"""What real model files do: parse arguments at import, return dataclass
outputs, sync inside their own step, and switch a Python scalar off 0 or 1."""

import argparse
from dataclasses import dataclass

import torch
import torch_xla
from torch import nn

# A script's own flags: xlacli's arguments must not leak into them.
ARGS = argparse.ArgumentParser().parse_args()


@dataclass
class Output:
    logits: torch.Tensor


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> Output:
        return Output(self.linear(x))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Model()


def get_inputs(step: int) -> torch.Tensor:
    return torch.ones(4, 8) * (step + 1)


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    scale = 1.0 if step < 3 else 0.5
    with torch.no_grad():
        logits = model(batch).logits
        torch_xla.sync()  # its own sync, mid-step
        return logits * scale
