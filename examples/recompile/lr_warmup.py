"""constant_value inside a library: a learning-rate warm-up that starts at 0.0.

    xlacli compile examples/recompile/lr_warmup.py --steps 5

LambdaLR scales the learning rate by step / 3, so it is 0.0 at step 0:
torch_xla bakes 0 and 1 into the graph as constants and passes any other
Python scalar as an input. At step 1 the update in torch/optim/sgd.py reads
0.0167 instead of 0.0, and the graph is compiled again; the user's line is
`opt.step()`, which called into sgd.py.
Fix: start the warm-up above zero (e.g. (step + 1) / 3), or pass the
learning rate as a tensor (torch.optim.SGD(lr=torch.tensor(...))).
"""

import torch
from torch import nn

WARMUP = 3


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Linear(16, 4)


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.05)
        model.sched = torch.optim.lr_scheduler.LambdaLR(model.opt, lambda s: min(1.0, s / WARMUP))
    loss = model(batch).pow(2).mean()
    loss.backward()
    model.opt.step()
    model.sched.step()
    model.opt.zero_grad(set_to_none=True)
    return loss
