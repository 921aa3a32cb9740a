"""A script that starts its ranks as plain ``multiprocessing`` processes (the
spawn start method, its own ``train`` as their target), and a branch on the
rank: rank 1 adds a regulariser to its loss from step 2 on, so from that step
its graph has ops the other rank's has not.

    xlacli compile examples/ranks/process_rank_branch.py --out runs/process
"""

import multiprocessing
import os
import tempfile

import torch
import torch.distributed as dist
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
        if rank == 1 and step >= 2:
            loss = loss + 0.01 * model.weight.abs().sum()  # only this rank
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
    dist.destroy_process_group()


if __name__ == "__main__":
    rendezvous = os.path.join(tempfile.mkdtemp(), "rendezvous")
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=train, args=(r, WORLD, rendezvous)) for r in range(WORLD)]
    for process in processes:
        process.start()
    for process in processes:
        process.join()
