"""optimizer_state (healthy): AdamW's moments and SGD's momentum appear at the first update.

    xlacli compile examples/recompile/optimizer_state.py --steps 5

The first opt.step() creates the optimizer's state inside step 0's graph;
from step 1 on the state is a graph input, so step 1 compiles once more.
That is expected warm-up: xlacli names it at the `opt.step()` line, with
nothing to fix, and no compile follows.
"""

import torch
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(8, 16, generator=generator), torch.randn(8, 4, generator=generator)


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    features, targets = batch
    loss = nn.functional.mse_loss(model(features), targets)
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
