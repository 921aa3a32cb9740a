"""Train for an epoch, then evaluate: the most common loop shape there is.

The evaluation loop, its accuracy counter and the final accuracy read each
make their first graph after the training loop's warm-up: new phases, not
recompiles.

    python examples/scripts/train_eval.py --batch-size 8
    xlacli compile examples/scripts/train_eval.py --fail-on-recompile -- --batch-size 8
"""

import argparse

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def synthetic(size: int, seed: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    images = torch.randn(size, 16, generator=generator)
    return TensorDataset(images, torch.randint(0, 4, (size,), generator=generator))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description="Train, then evaluate, a small MLP.")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--train-samples", type=int, default=48)
    parser.add_argument("--eval-samples", type=int, default=32)
    parser.add_argument(
        "--python-counter",
        action="store_true",
        help="count correct answers from a Python 0 (a lazy pattern: see docs/phases.md)",
    )
    parser.add_argument(
        "--log-loss", action="store_true", help="print the loss from a step closure"
    )
    parser.add_argument(
        "--clip", action="store_true", help="clip gradients, failing on a non-finite norm"
    )
    return parser.parse_args(argv)


def main(args) -> float:
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    train_loader = pl.MpDeviceLoader(
        DataLoader(synthetic(args.train_samples, 0), batch_size=args.batch_size), device
    )
    eval_loader = pl.MpDeviceLoader(
        DataLoader(synthetic(args.eval_samples, 1), batch_size=args.batch_size), device
    )
    model.train()
    for images, labels in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(images), labels)
        loss.backward()
        if args.clip:  # reads the norm on the host, inside torch
            nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        optimizer.step()
        if args.log_loss:
            xm.add_step_closure(lambda loss=loss: print(f"loss {loss.item():.3f}"))
    model.eval()
    correct = 0 if args.python_counter else torch.zeros((), dtype=torch.long, device=device)
    with torch.no_grad():
        for images, labels in eval_loader:
            correct += model(images).argmax(1).eq(labels).sum()
    accuracy = (correct.float() / args.eval_samples).item()  # after the last sync
    print(f"accuracy {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main(parse_args())
