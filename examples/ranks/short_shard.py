"""The data is split by rank without padding: 60 rows in shards of 32 leave
rank 1 28 rows, so its last batch has 12 rows where rank 0's has 16, and rank 1
compiles the step again for that shape.

    torchrun --nproc_per_node 2 --no-python xlacli compile examples/ranks/short_shard.py --out runs/shard
"""

import os

import torch
import torch.distributed as dist
import torch_xla
from torch import nn

ROWS, SHARD, BATCH = 60, 32, 16


def shard(rank: int, world: int) -> torch.Tensor:
    data = torch.randn(ROWS, 8, generator=torch.Generator().manual_seed(0))
    return data[rank * SHARD : (rank + 1) * SHARD]  # no padding: the last shard is short


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Linear(8, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = shard(rank, world)
    for start in range(0, len(data), BATCH):
        x = data[start : start + BATCH].to(device)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
