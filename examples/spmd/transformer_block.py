"""A transformer block sharded two ways: batch over `data`, weights over `model`.

    xlacli compile examples/spmd/transformer_block.py --devices 4 --steps 3

The attention projections and the first MLP layer are split by output features
(column-parallel), the attention output and the second MLP layer by input features
(row-parallel), as in Megatron-LM: the partitioner adds an all-reduce after each
row-parallel layer, and more in the backward pass.
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch import nn

xr.use_spmd()

BATCH, LENGTH, WIDTH, HEADS = 4, 8, 32, 4


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(WIDTH)
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.norm2 = nn.LayerNorm(WIDTH)
        self.fc1 = nn.Linear(WIDTH, 4 * WIDTH)
        self.fc2 = nn.Linear(4 * WIDTH, WIDTH)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q, k, v = (t.view(batch, length, HEADS, -1).transpose(1, 2) for t in (q, k, v))
        attention = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, length, width))
        return x + self.fc2(nn.functional.gelu(self.fc1(self.norm2(x))))


def get_model() -> nn.Module:
    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (2, devices // 2), ("data", "model"))
    xs.set_global_mesh(mesh)
    torch.manual_seed(0)
    block = Block().to(torch_xla.device())
    for column_parallel in (block.qkv, block.fc1):
        xs.mark_sharding(column_parallel.weight, mesh, ("model", None))
    for row_parallel in (block.proj, block.fc2):
        xs.mark_sharding(row_parallel.weight, mesh, (None, "model"))
    return block


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(BATCH, LENGTH, WIDTH, generator=torch.Generator().manual_seed(step))


def step(model: nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    xs.mark_sharding(batch, xs.get_global_mesh(), ("data", None, None))
    optimizer = _optimizer(model)
    optimizer.zero_grad(set_to_none=True)
    loss = model(batch).pow(2).mean()
    loss.backward()
    optimizer.step()
    return loss


_optimizers: dict[int, torch.optim.Optimizer] = {}


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    if id(model) not in _optimizers:
        _optimizers[id(model)] = torch.optim.SGD(model.parameters(), lr=0.01)
    return _optimizers[id(model)]
