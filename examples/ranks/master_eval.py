"""Rank 0 alone evaluates after step 1, and its evaluation syncs: rank 0's step
1 ends at the evaluation's sync with the training step and the evaluation in
one graph, a sync site rank 1 never reaches. An MpDeviceLoader loop with
``xm.optimizer_step``, as training scripts are written.

    torchrun --nproc_per_node 2 --no-python xlacli compile examples/ranks/master_eval.py --out runs/eval
"""

import os

import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def evaluate(model, device):
    with torch.no_grad():
        score = model(torch.randn(8, 8).to(device)).sum()
    torch_xla.sync()
    return score


def main():
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(64, 8), torch.randint(0, 4, (64,)))
    loader = pl.MpDeviceLoader(DataLoader(data, batch_size=16), device)
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        xm.optimizer_step(opt)
        opt.zero_grad()
        if rank == 0 and step == 1:
            evaluate(model, device)  # only on the master
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
