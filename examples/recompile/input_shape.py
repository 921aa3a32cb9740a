"""input_shape: the batch's sequence length changes at step 3.

    xlacli compile examples/recompile/input_shape.py --steps 5

Fix: pad or bucket lengths so the model sees a few fixed shapes.
"""

import torch
from torch import nn

LENGTHS = (16, 16, 16, 24, 16)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 16))


def get_inputs(step: int) -> torch.Tensor:
    length = LENGTHS[step % len(LENGTHS)]
    return torch.randint(0, 100, (4, length), generator=torch.Generator().manual_seed(step))
