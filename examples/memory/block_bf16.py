"""The transformer block of ``block.py`` under ``torch.autocast("xla", dtype=torch.bfloat16)``:
its matmuls run in bf16 (weights stay f32; autocast casts them per use).

    xlacli compile examples/memory/block_bf16.py --steps 1
"""

import torch
from block import get_inputs, get_model, train_step

__all__ = ["get_inputs", "get_model", "step"]


def step(model: torch.nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    with torch.autocast("xla", dtype=torch.bfloat16):
        return train_step(model, batch)
