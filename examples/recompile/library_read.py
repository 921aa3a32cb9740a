"""host_sync inside a library: clip_grad_norm_ checks the norm on the host.

    xlacli compile examples/recompile/library_read.py --steps 5

`clip_grad_norm_(..., error_if_nonfinite=True)` reads the total norm's value
(`if total_norm.isnan() or total_norm.isinf()`) inside torch/nn/utils: the
step is cut in two graphs. The user's line is the call; the library line is
where the value is read.
Fix: error_if_nonfinite=False (the default), and check the norm after the sync.
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = model(batch).pow(2).mean()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
