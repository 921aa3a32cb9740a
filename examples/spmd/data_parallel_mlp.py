"""Data-parallel SPMD: the batch is split over every device, the weights replicated.

    xlacli compile examples/spmd/data_parallel_mlp.py --devices 4 --steps 3

XLA's partitioner inserts the all-reduces that sum the gradients over the devices.
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch import nn

# SPMD must be switched on before anything touches the XLA device.
xr.use_spmd()

BATCH = 16
FEATURES = 32


def get_model() -> nn.Module:
    devices = xr.global_runtime_device_count()
    xs.set_global_mesh(xs.Mesh(np.arange(devices), (devices,), ("data",)))
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 8))
    return model.to(torch_xla.device())


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(BATCH, FEATURES, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    xs.mark_sharding(batch, xs.get_global_mesh(), ("data", None))
    optimizer = _optimizer(model)
    optimizer.zero_grad(set_to_none=True)
    loss = model(batch).logsumexp(dim=1).mean()
    loss.backward()
    optimizer.step()
    return loss


_optimizers: dict[int, torch.optim.Optimizer] = {}


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    if id(model) not in _optimizers:
        _optimizers[id(model)] = torch.optim.SGD(model.parameters(), lr=0.01)
    return _optimizers[id(model)]
