"""torchvision's ResNet-18 in eval mode, random weights: its second step's
graph differs from the first by removed nodes (issue 20, item 9)."""

import torch
import torchvision


def get_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torchvision.models.resnet18(weights=None).eval()


def get_inputs(step: int) -> torch.Tensor:
    return torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(step))
