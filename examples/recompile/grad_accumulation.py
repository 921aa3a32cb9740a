"""graph_structure inside a library: gradient accumulation steps the optimizer every 4th step.

    xlacli compile examples/recompile/grad_accumulation.py --steps 5

Steps 0-2 only accumulate gradients; step 3 also runs `opt.step()`, whose
update ops (made in torch/optim/sgd.py) join the graph: a new graph, traced
to the user's `opt.step()` call, with sgd.py as the library line.
Fix: expected with accumulation (one graph with and one without the
update); keep the number of distinct graphs at two.
"""

import torch
from torch import nn

ACCUMULATE = 4


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(8, 16, generator=generator), torch.randint(0, 4, (8,), generator=generator)


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.parameters(), lr=0.05)
    features, labels = batch
    loss = nn.functional.cross_entropy(model(features), labels) / ACCUMULATE
    loss.backward()
    if (step + 1) % ACCUMULATE == 0:
        model.opt.step()
        model.opt.zero_grad(set_to_none=True)
    return loss
