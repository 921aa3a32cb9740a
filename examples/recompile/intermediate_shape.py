"""intermediate_shape: slicing by a Python int that grows at step 3.

    xlacli compile examples/recompile/intermediate_shape.py --steps 5

The input never changes shape; the slice inside the step does.
Fix: slice to a fixed size and mask, or bucket the size.
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(16, 16)


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(4, 32, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    context = 8 if step < 3 else 12
    with torch.no_grad():
        window = batch[:, :context]  # the window length is a Python int
        return model(window).mean(dim=1)
