"""graph_break: a data-dependent branch on a tensor's value.

    xlacli compile examples/dynamo/graph_break.py --mode dynamo --steps 3

`if h.sum().item() > 0` needs the value on the host: Dynamo stops the FX graph
at `.item()` (a graph break), runs the graph, and resumes in a second frame.
Fix: keep it on the device, `h = torch.where(h.sum() > 0, h * 2, h)`.
"""

import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(x)
        if h.sum().item() > 0:  # graph break: Tensor.item()
            h = h * 2
        return torch.relu(h)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Gate()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))
