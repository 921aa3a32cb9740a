"""input_dtype: the data switches to half precision at step 3.

xlacli compile examples/recompile/input_dtype.py --steps 5
"""

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x.float())


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Model()


def get_inputs(step: int) -> torch.Tensor:
    x = torch.randn(8, 16, generator=torch.Generator().manual_seed(step))
    return x.half() if step >= 3 else x
