"""A stream of batches whose sequence length varies: every new length is a compile.

    xlacli compile examples/advice/variable_lengths.py --steps 12

The report's bucket advice lists the lengths seen, proposes bucket edges (the
fewest buckets that pad under 20%) and the code to pad to them;
``benchmarks/advice/buckets.py`` applies it (``BUCKET_EDGES=7,16``) and measures.
"""

import os

import torch
from torch import nn

VOCAB = 200
# Token counts of a made-up stream of short sentences, one batch per step.
LENGTHS = (5, 7, 16, 6, 12, 16, 9, 5, 14, 16, 7, 11)
EDGES = tuple(int(edge) for edge in os.environ.get("BUCKET_EDGES", "").split(",") if edge)


class Classifier(nn.Module):
    def __init__(self, width: int = 32):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, width)
        self.mix = nn.Linear(width, width)
        self.out = nn.Linear(width, 2)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.mix(self.embed(tokens)))
        mask = (tokens != 0).unsqueeze(-1)  # padding (token 0) does not count
        return self.out((hidden * mask).sum(1) / mask.sum(1))


def get_model() -> nn.Module:
    torch.manual_seed(0)
    return Classifier()


def get_inputs(step: int) -> torch.Tensor:
    length = LENGTHS[step % len(LENGTHS)]
    generator = torch.Generator().manual_seed(step)
    tokens = torch.randint(1, VOCAB, (4, length), generator=generator)
    return pad_to_bucket(tokens) if EDGES else tokens


def pad_to_bucket(tensor: torch.Tensor, dim: int = 1, value: int = 0) -> torch.Tensor:
    """The advice's padding code, as xlacli prints it."""
    import bisect

    import torch.nn.functional as F

    size = tensor.shape[dim]
    index = bisect.bisect_left(EDGES, size)
    edge = EDGES[index] if index < len(EDGES) else size
    pad = [0, 0] * (tensor.dim() - dim - 1) + [0, edge - size]
    return F.pad(tensor, pad, value=value)
