"""tiny.py under autocast for the wrong device type: "cpu" does not reach XLA tensors."""

import torch
from tiny import get_inputs, get_model, train_step

__all__ = ["get_inputs", "get_model", "step"]


def step(model, batch, step):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        return train_step(model, batch)
