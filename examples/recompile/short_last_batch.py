"""input_shape: the last batch of an epoch is shorter.

    xlacli compile examples/recompile/short_last_batch.py --steps 5

20 samples in batches of 8: every third batch has 4 rows, so the model
sees a new input shape at step 2, made by the slice in get_inputs.
Fix: drop the last batch (DataLoader(drop_last=True)) or pad it to 8 rows
and mask the padding out of the loss.
"""

import torch
from torch import nn

DATA = torch.randn(20, 16, generator=torch.Generator().manual_seed(0))
BATCH = 8


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))


def get_inputs(step: int) -> torch.Tensor:
    batches_per_epoch = -(-len(DATA) // BATCH)
    start = (step % batches_per_epoch) * BATCH
    return DATA[start : start + BATCH]
