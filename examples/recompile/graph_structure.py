"""graph_structure: a Python branch on the step adds ops from step 3 on.

    xlacli compile examples/recompile/graph_structure.py --steps 5

Fix: keep the graph the same every step (torch.where on tensors instead of a
Python `if`), or accept a second graph compiled once.
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(16, 4)


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    with torch.no_grad():
        out = model(batch)
        if step >= 3:  # a Python branch: from step 3 on, the graph has more ops
            out = torch.tanh(out) + out.abs()
        return out
