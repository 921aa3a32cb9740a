"""graph_structure inside a module: dropout switched on at step 3 in a submodule.

    xlacli compile examples/recompile/encoder_dropout.py --steps 5

The encoder's dropout probability is 0.0 for the first steps and 0.1 from
step 3 on: with p = 0.0 dropout adds no op, with 0.1 it adds the mask. The
ops are made inside torch/nn/functional.py, called from torch's nn.Dropout,
called from the user's `self.encoder(x)`: that is the line named, with the
library line inside it.
Fix: keep p fixed (turn dropout off with model.eval() instead), or expect one
more graph when it changes.
"""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Dropout(0.0))
        self.head = nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(x)
        return self.head(hidden)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Classifier()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    model.encoder[2].p = 0.1 if step >= 3 else 0.0
    with torch.no_grad():
        return model(batch).softmax(dim=-1)
