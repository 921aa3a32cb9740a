"""A script that starts its own ranks with ``torch.multiprocessing.spawn``: two
processes train the same model and average the loss with gloo, and rank 0
alone logs the loss at step 2, a value read the other rank never makes.

    xlacli compile examples/ranks/spawn_master_print.py --out runs/spawn
"""

import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch_xla
from torch import nn

STEPS = 4
WORLD = 2


def train(rank: int, world: int, rendezvous: str) -> None:
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank, world_size=world)
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
        total = loss.detach().cpu()
        dist.all_reduce(total)  # every rank meets here after each step
    dist.destroy_process_group()


if __name__ == "__main__":
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    mp.spawn(train, args=(WORLD, rendezvous), nprocs=WORLD)
