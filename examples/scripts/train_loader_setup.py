"""A training loop whose setup leaves work pending on the device: the weights
are rescaled in place after moving them, so the first sync of the loop
(``MpDeviceLoader`` handing out its first batch) runs the setup's graph, not
a training step. The step itself is a ``torch_xla.compile`` function, as in
torch_xla's own ``train_resnet_base.py``.

    python examples/scripts/train_loader_setup.py --steps 6
    xlacli compile examples/scripts/train_loader_setup.py --steps 3 -- --steps 6
"""

import argparse

import torch
import torch_xla
import torch_xla.distributed.parallel_loader as pl
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=8)
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    with torch.no_grad():  # pending on the device until the loop's first sync
        for parameter in model.parameters():
            parameter.mul_(0.5)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    batches = [
        (torch.randn(args.batch_size, 16), torch.randint(0, 4, (args.batch_size,)))
        for _ in range(args.steps)
    ]

    def train_step(features, labels):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        return loss

    compiled_step = torch_xla.compile(train_step, full_graph=True)
    for features, labels in pl.MpDeviceLoader(batches, device):
        compiled_step(features, labels)
    print(f"{args.steps} steps")


if __name__ == "__main__":
    main()
