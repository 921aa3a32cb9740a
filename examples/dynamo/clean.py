"""clean: a model whose step runs under torch.compile(backend="openxla").

    xlacli compile examples/dynamo/clean.py --steps 3

Dynamo captures the whole forward as one FX graph; torch_xla lowers it to one
XLA graph once, then runs it every step without lazy tracing.
"""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(torch.relu(self.up(x)))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Block()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


_compiled: dict[int, nn.Module] = {}


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    compiled = _compiled.setdefault(id(model), torch.compile(model, backend="openxla"))
    with torch.no_grad():
        return compiled(batch)
