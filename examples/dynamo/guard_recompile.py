"""guard_recompile: the batch size changes, so a Dynamo guard fails.

    xlacli compile examples/dynamo/guard_recompile.py --mode dynamo --steps 4

Dynamo guards each compiled frame on its input sizes; at step 2 the batch
grows from 4 to 6, the guard `tensor 'x' size mismatch at index 0` fails and
Dynamo recompiles the frame (and torch_xla compiles a new XLA graph).
Fix: pad batches to a few bucket sizes, or compile with dynamic=False and
accept one graph per size, or mark the dimension dynamic.
"""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.proj(x))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Encoder()


def get_inputs(step: int) -> torch.Tensor:
    batch = 4 if step < 2 else 6
    return torch.randn(batch, 16, generator=torch.Generator().manual_seed(step))
