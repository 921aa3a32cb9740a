"""FSDPv2 (SPMD's fully sharded data parallel) on a small decoder stack, trained
with Adam, as torch_xla's docs shard one: every weight and optimizer state is split
over the devices, hundreds of graph inputs and outputs and collectives per step.
The terminal report summarises them by how and where they are split; report.json
and the HTML page list each.

    xlacli compile examples/spmd/fsdp_decoder.py --devices 4 --steps 3
"""

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch import nn
from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
    SpmdFullyShardedDataParallel as FSDPv2,
)

xr.use_spmd()


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, 4, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class Decoder(nn.Module):
    def __init__(self, layers=4, dim=32, vocab=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (devices, 1), ("fsdp", "model"))
    xs.set_global_mesh(mesh)
    device = torch_xla.device()
    model = FSDPv2(Decoder().to(device), mesh=mesh)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _step in range(5):
        tokens = torch.randint(0, 64, (8, 16)).to(device)
        xs.mark_sharding(tokens, mesh, ("fsdp", None))
        optimizer.zero_grad()
        logits = model(tokens)
        loss = nn.functional.cross_entropy(logits.view(-1, 64), tokens.view(-1))
        loss.backward()
        optimizer.step()
        torch_xla.sync()


if __name__ == "__main__":
    main()
