"""tiny.py with both blocks checkpointed by torch_xla."""

import torch_xla.utils.checkpoint
from tiny import get_inputs, get_model, train_step

__all__ = ["get_inputs", "get_model", "step"]


def _checkpointed(block, x):
    return torch_xla.utils.checkpoint.checkpoint(block, x)


def step(model, batch, step):
    return train_step(model, batch, run_layer=_checkpointed)
