"""An SPMD model whose mesh asks for 8 devices (run with --devices 4: exit 2)."""

import numpy as np
import torch
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()


def get_model():
    xs.Mesh(np.arange(8), (2, 4), ("data", "model"))
    return torch.nn.Linear(4, 4)


def get_inputs():
    return torch.ones(2, 4)
