"""A training loop that logs the loss with ``.item()`` on every step.

    xlacli compile examples/advice/logging_loop.py --steps 6

Each ``.item()`` makes torch_xla run the forward as a graph of its own, then the
step's graph computes it again. The report ranks the read by its cost per step
and advises ``xm.add_step_closure``; ``LOG_IN_CLOSURE=1`` applies that, and
``benchmarks/advice/value_reads.py`` measures the step time before and after.
"""

import os

import torch
from torch import nn

IN_CLOSURE = os.environ.get("LOG_IN_CLOSURE") == "1"
LOSSES: list[float] = []


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 1)
    )


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(128, 64, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = model(batch).pow(2).mean()
    if IN_CLOSURE:  # the advice applied: read after the step's graph ran
        import torch_xla.core.xla_model as xm

        xm.add_step_closure(lambda value: LOSSES.append(value.item()), args=(loss,))
    else:
        LOSSES.append(loss.item())
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
