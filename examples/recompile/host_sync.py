"""host_sync: from step 3 on, Python reads a tensor value mid-step.

    xlacli compile examples/recompile/host_sync.py --steps 5

`if loss > 1.0` calls bool() on a device tensor: torch_xla must run the graph
so far to answer, so the step is cut in two graphs.
Fix: keep the decision on the device (torch.where), or read values after
torch_xla.sync() (xm.add_step_closure for logging).
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
        loss = model(batch).pow(2).mean()
        if step >= 3 and loss > 1.0:  # bool(tensor) reads the value mid-step
            loss = loss * 0.5
        return loss
