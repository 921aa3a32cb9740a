"""torch_xla's own launcher: ``xmp.spawn(fn)`` starts one process per local
device (a TPU host's chips; one process on XLA:CPU) and calls ``fn(index)`` in
each; ``xm.optimizer_step`` all-reduces the gradients across them (on a world
of one, it has nothing to reduce).

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
        xm.optimizer_step(opt)  # the gradients all-reduced across the processes
        opt.zero_grad()
        torch_xla.sync()
    xm.master_print(f"process {index} of {xr.world_size()} done, loss {loss.item():.4f}")


if __name__ == "__main__":
    xmp.spawn(train)
