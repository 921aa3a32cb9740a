"""A small convolutional network on 32x32 images.

xlacli compile examples/conv.py --train
"""

import torch
from torch import nn

BATCH = 4


class SmallConvNet(nn.Module):
    def __init__(self, classes: int = 10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, kernel_size=3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.head = nn.Linear(32, classes)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(images).flatten(1))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return SmallConvNet()


def get_inputs(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    images = torch.randn(BATCH, 3, 32, 32, generator=generator)
    labels = torch.randint(0, 10, (BATCH,), generator=generator)
    return images, labels


def step(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor], step: int) -> torch.Tensor:
    """One training step: the labels are not a model input, so the step is ours."""
    images, labels = batch
    optimizer = _optimizer(model)
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    return loss


_optimizers: dict[int, torch.optim.Optimizer] = {}


def _optimizer(model: nn.Module) -> torch.optim.Optimizer:
    # One optimizer per model, created at the first step (on the device).
    if id(model) not in _optimizers:
        _optimizers[id(model)] = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return _optimizers[id(model)]
