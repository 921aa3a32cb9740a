"""Two tiny MLP blocks trained plainly: the reference of the memory goldens and tests."""

import torch
from torch import nn

WIDTH = 16
HIDDEN = 64


class Block(nn.Module):
    def __init__(self, hidden: int = HIDDEN):
        super().__init__()
        self.up = nn.Linear(WIDTH, hidden)
        self.down = nn.Linear(hidden, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(x)))


class Tiny(nn.Module):
    def __init__(self, hidden: int = HIDDEN):
        super().__init__()
        self.embed = nn.Linear(WIDTH, WIDTH)
        self.blocks = nn.ModuleList([Block(hidden), Block(hidden)])

    def forward(self, x: torch.Tensor, run_layer=None) -> torch.Tensor:
        x = self.embed(x)
        for block in self.blocks:
            x = run_layer(block, x) if run_layer is not None else block(x)
        return x


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Tiny()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, WIDTH, generator=torch.Generator().manual_seed(step))


def train_step(model: nn.Module, batch: torch.Tensor, run_layer=None) -> torch.Tensor:
    model.zero_grad(set_to_none=True)
    loss = model(batch, run_layer).float().pow(2).mean()
    loss.backward()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter -= 0.01 * parameter.grad
    return loss


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    return train_step(model, batch)
