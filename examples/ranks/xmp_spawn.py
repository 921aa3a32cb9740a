"""torch_xla's own launcher: ``xmp.spawn(fn)`` starts one process per local
device (a TPU host's chips; one process on XLA:CPU) and calls ``fn(index)`` in
each. Each step averages the loss across the replicas with ``xm.all_reduce``,
so each step's graph holds an ``all-reduce``.

    xlacli compile examples/ranks/xmp_spawn.py --out runs/xmp
"""

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr
from torch import nn

STEPS = 3


def train(index: int) -> None:
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Linear(8, 4).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        x = torch.randn(16, 8).to(device)
        loss = model(x).square().mean()
        loss.backward()
        xm.optimizer_step(opt)  # with more than one replica: the gradients all-reduced
        opt.zero_grad()
        mean_loss = xm.all_reduce(xm.REDUCE_SUM, loss.detach(), scale=1.0 / xr.world_size())
        torch_xla.sync()
    xm.master_print(f"process {index} of {xr.world_size()} done, loss {mean_loss.item():.4f}")


if __name__ == "__main__":
    xmp.spawn(train)
