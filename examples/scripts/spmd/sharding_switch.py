"""An SPMD training script that changes how the hidden activations are
sharded part-way through: from step 3 they are split by features instead
of by rows. The sharding is part of the graph, so the step compiles again.

    CPU_NUM_DEVICES=4 python examples/scripts/spmd/sharding_switch.py --steps 5
    xlacli compile examples/scripts/spmd/sharding_switch.py --devices 4 -- --steps 5

Expected: one steady-state recompile, ``sharding``, at the ``mark_sharding``
line, with the partition spec before and after.
"""

import argparse

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    xr.use_spmd()
    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (2, devices // 2), ("data", "model"))
    device = torch_xla.device()
    torch.manual_seed(0)
    first, second = nn.Linear(16, 32).to(device), nn.Linear(32, 4).to(device)
    optimizer = torch.optim.SGD([*first.parameters(), *second.parameters()], lr=0.01)
    for step in range(args.steps):
        x = torch.randn(8, 16).to(device)
        xs.mark_sharding(x, mesh, ("data", None))
        hidden = torch.relu(first(x))
        spec = ("data", None) if step < 3 else (None, "model")
        xs.mark_sharding(hidden, mesh, spec)
        loss = second(hidden).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch_xla.sync()


if __name__ == "__main__":
    main()
