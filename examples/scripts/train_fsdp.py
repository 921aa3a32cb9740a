"""An FSDP auto-wrapped MLP: the wrapper syncs once per module it shards
before the first training step. Those syncs are setup, not steps.

    python examples/scripts/train_fsdp.py
    xlacli compile examples/scripts/train_fsdp.py --steps 3
"""

import argparse
from functools import partial

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
from torch_xla.distributed.fsdp.wrap import size_based_auto_wrap_policy


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train an FSDP-wrapped MLP.")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--samples", type=int, default=48)
    parser.add_argument("--layers", type=int, default=4)
    return parser.parse_args(argv)


def main(args) -> None:
    torch.manual_seed(0)
    device = torch_xla.device()
    layers = [nn.Sequential(nn.Linear(32, 32), nn.ReLU()) for _ in range(args.layers)]
    model = nn.Sequential(nn.Linear(16, 32), *layers, nn.Linear(32, 4)).to(device)
    model = FSDP(model, auto_wrap_policy=partial(size_based_auto_wrap_policy, min_num_params=500))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(0)
    data = TensorDataset(
        torch.randn(args.samples, 16, generator=generator),
        torch.randint(0, 4, (args.samples,), generator=generator),
    )
    loader = pl.MpDeviceLoader(DataLoader(data, batch_size=args.batch_size), device)
    for step, (features, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        if step % 4 == 0:
            xm.add_step_closure(lambda s=step, v=loss: print(f"step {s} loss {v.item():.3f}"))


if __name__ == "__main__":
    main(parse_args())
