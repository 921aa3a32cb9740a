"""xla_compile: torch_xla's own eager + compile API.

    xlacli compile examples/dynamo/xla_compile.py --steps 3

`torch_xla.compile(fn)` traces fn lazily once per input signature and runs the
cached XLA graph afterwards; PT_XLA_DEBUG marks these compiles as
"torch_xla.compile". No Dynamo is involved: compare with `--mode dynamo`.
"""

import torch
import torch_xla
from torch import nn


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(8, 16, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    with torch.no_grad():
        return torch_xla.compile(model)(batch)
