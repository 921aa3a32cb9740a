"""Rank 0 alone logs the loss: its ``loss.item()`` runs one graph more than
the other ranks run, every time it logs.

    torchrun --nproc_per_node 2 --no-python xlacli compile examples/ranks/master_print.py --out runs/master
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
    for step in range(STEPS):
        x = torch.randn(16, 8).to(device)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        if rank == 0 and step == 2:
            print(f"step {step} loss {loss.item():.4f}")  # the master-only value read
        torch_xla.sync()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
