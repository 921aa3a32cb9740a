"""An MNIST-shaped CNN trainer, written the way training scripts are: argparse,
a Dataset, a DataLoader (the last batch is short: drop_last=False), an
MpDeviceLoader, an LR scheduler and the loss logged every few steps.

    python examples/scripts/train_cnn.py --epochs 1 --batch-size 8
    xlacli compile examples/scripts/train_cnn.py --steps 5 -- --batch-size 8
"""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SyntheticDigits(Dataset):
    """28x28 grey images with a label, made from a fixed seed (no download)."""

    def __init__(self, size: int):
        generator = torch.Generator().manual_seed(0)
        self.images = torch.randn(size, 1, 28, 28, generator=generator)
        self.labels = torch.randint(0, 10, (size,), generator=generator)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int):
        return self.images[index], self.labels[index]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=5)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=5)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(nn.functional.max_pool2d(self.conv1(x), 2))
        x = torch.relu(nn.functional.max_pool2d(self.conv2(x), 2))
        return self.fc(x.flatten(1))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train a small CNN on synthetic digits.")
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--log-every", type=int, default=4)
    return parser.parse_args(argv)


def train(args):
    torch.manual_seed(0)
    device = torch_xla.device()
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    loader = DataLoader(SyntheticDigits(args.samples), batch_size=args.batch_size, shuffle=False)
    device_loader = pl.MpDeviceLoader(loader, device)
    for epoch in range(args.epochs):
        model.train()
        for step, (images, labels) in enumerate(device_loader):
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(images), labels)
            loss.backward()
            optimizer.step()
            scheduler.step()
            if step % args.log_every == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.4f}")
    xm.master_print("done")


if __name__ == "__main__":
    train(parse_args())
