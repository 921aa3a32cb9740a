"""SPMD data parallelism the way torch_xla's examples write it: the mesh
reaches torch_xla only through ``MpDeviceLoader(input_sharding=...)``, every
weight is replicated, and the gradients are all-reduced across the devices.

    CPU_NUM_DEVICES=4 python examples/scripts/spmd/data_parallel_loader.py --steps 4
    xlacli compile examples/scripts/spmd/data_parallel_loader.py --devices 4 -- --steps 4

Expected in the SPMD view: the mesh (4, data), the batch's split input, the
replicated weights as one line, the gradients' all-reduce at the user's
``loss.backward()`` / ``optimizer.step()`` line; device memory said plainly.
"""

import argparse

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr
import torch_xla.utils.utils as xu
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args()

    xr.use_spmd()
    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (devices,), ("data",))
    batch = 2 * devices
    loader = xu.SampleGenerator(
        data=(torch.zeros(batch, 3, 8, 8), torch.zeros(batch, dtype=torch.int64)),
        sample_count=args.steps,
    )
    device = torch_xla.device()
    train_loader = pl.MpDeviceLoader(
        loader, device, input_sharding=xs.ShardingSpec(mesh, ("data", None, None, None))
    )
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    ).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = loss_fn(model(data), target)
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
