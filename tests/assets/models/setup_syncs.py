"""A model whose loading runs graphs of its own (three syncs nobody waits for),
then steps heavy enough that each step's execution is still running when the
step's sync returns: every execution must be counted once, in its own step."""

import torch
import torch_xla


class Heavy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(384, 384) * 0.01)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(6):
            x = torch.tanh(x @ self.weight)
        return x


def get_model() -> torch.nn.Module:
    table = torch.randn(384, 384, device=torch_xla.device())
    for _ in range(3):
        table = table @ table * 0.01
        torch_xla.sync()
    return Heavy()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(256, 384)
