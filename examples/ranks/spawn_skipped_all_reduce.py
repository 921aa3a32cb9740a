"""A real deadlock in processes the script starts itself
(``torch.multiprocessing.spawn``): at step 2 rank 1 skips the gloo
``all_reduce`` every rank must join and waits to receive a tensor instead, so
rank 0 blocks in ``all_reduce`` and rank 1 in ``recv``, both forever.

    xlacli compile examples/ranks/spawn_skipped_all_reduce.py --out runs/hang --hang-timeout 20
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


def average(value: torch.Tensor, world: int) -> torch.Tensor:
    total = value.detach().cpu()
    dist.all_reduce(total)  # every rank must come here
    return total / world


def wait_for_peer() -> torch.Tensor:
    buffer = torch.zeros(1)
    dist.recv(buffer, src=0)  # rank 0 never sends
    return buffer


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
        torch_xla.sync()
        if rank == 1 and step == 2:
            wait_for_peer()
        else:
            average(loss, world)
    dist.destroy_process_group()


if __name__ == "__main__":
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    mp.spawn(train, args=(WORLD, rendezvous), nprocs=WORLD)
