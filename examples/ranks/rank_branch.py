"""A branch on the rank: rank 1 adds a regulariser to its loss from step 2 on,
so from that step its graph has ops the other rank's has not.

    torchrun --nproc_per_node 2 --no-python xlacli compile examples/ranks/rank_branch.py --out runs/branch
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
        if rank == 1 and step >= 2:
            loss = loss + 0.01 * model.weight.abs().sum()  # only this rank
        loss.backward()
        opt.step()
        opt.zero_grad()
        torch_xla.sync()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
