"""Healthy: an EMA teacher whose decay ramps up every step.

    xlacli compile examples/recompile/ema_teacher.py --steps 5

The teacher's weights follow the student's with a decay that changes every
step (0.5, 0.67, 0.75...). It looks like a changing Python scalar, but none
of the values is 0 or 1, so torch_xla passes each as a graph input: after
warm-up no step compiles.
"""

import copy

import torch
from torch import nn


class Distill(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.student = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        self.teacher = copy.deepcopy(self.student).requires_grad_(False)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Distill()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    if not hasattr(model, "opt"):
        model.opt = torch.optim.SGD(model.student.parameters(), lr=0.05)
    with torch.no_grad():
        target = model.teacher(batch).softmax(dim=-1)
    loss = -(target * model.student(batch).log_softmax(dim=-1)).sum(-1).mean()
    loss.backward()
    model.opt.step()
    model.opt.zero_grad(set_to_none=True)
    decay = 1.0 - 1.0 / (step + 2)
    with torch.no_grad():
        for teacher, student in zip(
            model.teacher.parameters(), model.student.parameters(), strict=True
        ):
            teacher.mul_(decay).add_(student, alpha=1.0 - decay)
    return loss
