"""input_shape: each batch is trimmed to its longest sequence.

    xlacli compile examples/recompile/trim_padding.py --steps 5

The collate step pads to 32 tokens, then trims the padding to the batch's
longest sequence (20 tokens, then 18 at step 3): a new input width, made by
the trimming slice in get_inputs.
Fix: pad to a few fixed lengths (round up to a multiple of 16) instead of
trimming to the longest.
"""

import torch
from torch import nn

LONGEST = (20, 20, 20, 18, 20)


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Embedding(64, 16), nn.Linear(16, 4))


def get_inputs(step: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(step)
    lengths = torch.randint(4, LONGEST[step % len(LONGEST)], (4,), generator=generator)
    lengths[0] = LONGEST[step % len(LONGEST)]
    tokens = torch.randint(1, 64, (4, 32), generator=generator)
    tokens = tokens * (torch.arange(32) < lengths[:, None])
    return tokens[:, : int(lengths.max())]
