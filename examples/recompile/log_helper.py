"""host_sync from a helper: a logging function reads the loss with .item().

    xlacli compile examples/recompile/log_helper.py --steps 5

Every 2nd step the loop calls `log_metrics(step, loss)`, whose `loss.item()`
reads a value before the step's sync: the step is cut in two graphs. The
read is on the helper's line; the call in step() is given as `also`.
Fix: log after torch_xla.sync(), or with xm.add_step_closure.
"""

import torch
from torch import nn

HISTORY: list[float] = []


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def log_metrics(step: int, loss: torch.Tensor) -> None:
    HISTORY.append(loss.item())


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = model(batch).pow(2).mean()
    if step % 2 == 1:
        log_metrics(step, loss)
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
