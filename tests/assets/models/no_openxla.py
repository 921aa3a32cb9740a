"""A torch build without the openxla Dynamo backend, simulated: the model file
unregisters it at import, before xlacli's --mode dynamo looks for it."""

import torch
from torch import nn
from torch._dynamo.backends import registry

registry._lazy_import()
registry._BACKENDS.pop("openxla", None)
registry._COMPILER_FNS.pop("openxla", None)


def get_model() -> nn.Module:
    return nn.Linear(4, 2)


def get_inputs(step: int) -> torch.Tensor:
    return torch.ones(2, 4)
