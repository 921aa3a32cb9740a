"""A script that spawns one process per device with xmp.spawn."""

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index, steps):
    device = torch_xla.device()
    x = torch.ones(4, device=device)
    for _ in range(steps):
        x = x * 2 + 1
        xm.mark_step()
    xm.master_print(f"process {index} done")


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(3,))
