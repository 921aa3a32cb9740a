"""sharding: at step 3 the batch is split by features instead of rows.

    xlacli compile examples/spmd/sharding_change.py --devices 4 --steps 5

A tensor's sharding is part of the graph torch_xla compiles: the step that marks
the batch differently compiles (and partitions) the whole graph again, with other
collectives. Fix: keep one sharding per input, or reshard inside the graph.
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch import nn

xr.use_spmd()

BATCH, FEATURES = 8, 16
CHANGED_AT = 3


def get_model() -> nn.Module:
    devices = xr.global_runtime_device_count()
    xs.set_global_mesh(xs.Mesh(np.arange(devices), (2, devices // 2), ("data", "model")))
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 4)).to(
        torch_xla.device()
    )


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(BATCH, FEATURES, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    spec = ("data", None) if step != CHANGED_AT else (None, "model")
    xs.mark_sharding(batch, xs.get_global_mesh(), spec)
    with torch.no_grad():
        return model(batch).sum()
