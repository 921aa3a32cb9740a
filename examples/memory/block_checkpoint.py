"""The transformer block of ``block.py`` with every layer checkpointed by torch_xla:
the backward pass recomputes each layer's activations instead of keeping them.

    xlacli compile examples/memory/block_checkpoint.py --steps 1

torch_xla's checkpoint wraps each recomputed region in an ``opt-barrier`` so that
XLA's common-subexpression elimination cannot merge it back into the forward pass.
(``torch.utils.checkpoint.checkpoint`` fails on XLA in torch 2.9 with
``module 'torch' has no attribute 'xla'``.)
"""

import torch
import torch_xla.utils.checkpoint
from block import get_inputs, get_model, train_step

__all__ = ["get_inputs", "get_model", "step"]


def _checkpointed(block: torch.nn.Module, x: torch.Tensor) -> torch.Tensor:
    return torch_xla.utils.checkpoint.checkpoint(block, x, use_reentrant=True)


def step(model: torch.nn.Module, batch: torch.Tensor, step: int) -> torch.Tensor:
    return train_step(model, batch, run_layer=_checkpointed)
