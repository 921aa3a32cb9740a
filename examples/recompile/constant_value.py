"""constant_value: a Python float baked into the graph as a constant.

    xlacli compile examples/recompile/constant_value.py --steps 5

torch_xla passes most Python scalars to the graph as inputs, but 0 and 1 are
"special scalars" it bakes in as constants: switching an auxiliary loss
weight from 0.0 to 1.0 at step 3 compiles a new graph.
Fix: pass the weight as a tensor (torch.tensor(w, device=...)).
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(16, 4)


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    aux_weight = 0.0 if step < 3 else 1.0
    with torch.no_grad():
        out = model(batch)
        return out.pow(2).mean() + aux_weight * out.abs().mean()
