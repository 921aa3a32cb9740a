"""An SPMD model whose mesh shape (3, 2) does not divide 4 devices (exit 2)."""

import numpy as np
import torch
import torch_xla.distributed.spmd as xs
import torch_xla.runtime as xr

xr.use_spmd()


def get_model():
    xs.Mesh(np.arange(xr.global_runtime_device_count()), (3, 2), ("data", "model"))
    return torch.nn.Linear(4, 4)


def get_inputs():
    return torch.ones(2, 4)
