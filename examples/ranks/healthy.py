"""A healthy 2-rank loop: every rank trains the same tiny MLP on its own shard
and averages the loss across ranks with gloo; every rank runs the same graphs.

    torchrun --nproc_per_node 2 --no-python xlacli compile examples/ranks/healthy.py --out runs/healthy
"""

import os

import torch
import torch.distributed as dist
import torch_xla
from torch import nn

STEPS = 4


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Linear(8, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _step in range(STEPS):
        x = torch.randn(16, 8).to(device)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
        # Every rank averages the same kind of value: a collective on CPU tensors.
        total = torch.zeros(1)
        dist.all_reduce(total)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
