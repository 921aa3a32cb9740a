"""SPMD data parallel with a plain SGD (no momentum: no optimizer state):
the batch is sharded by MpDeviceLoader's input_sharding. The parameters come
out of the first step replicated, which compiles the step once more (a
`sharding` change, not optimizer state). The evaluation counts correct
answers from a Python 0 (the python_accumulator pattern).

    xlacli compile examples/scripts/train_spmd_dp.py --devices 4 --steps 4
"""

import argparse

import numpy as np
import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.spmd as xs
from torch import nn
from torch_xla import runtime as xr

xr.use_spmd()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="SPMD data-parallel MLP.")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--batches", type=int, default=6)
    return parser.parse_args(argv)


def main(args) -> None:
    torch.manual_seed(0)
    devices = xr.global_runtime_device_count()
    mesh = xs.Mesh(np.arange(devices), (devices,), ("data",))
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(0)
    batches = [
        (torch.randn(args.batch_size, 16, generator=generator),
         torch.randint(0, 4, (args.batch_size,), generator=generator))
        for _ in range(args.batches)
    ]  # fmt: skip
    loader = pl.MpDeviceLoader(
        batches, device, input_sharding=xs.ShardingSpec(mesh, ("data", None))
    )
    for features, labels in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(features), labels).backward()
        optimizer.step()
    correct = 0
    with torch.no_grad():
        for features, labels in loader:
            correct += model(features).argmax(1).eq(labels).sum()
    print(f"accuracy {correct.item() / (args.batch_size * args.batches):.3f}")


if __name__ == "__main__":
    main(parse_args())
