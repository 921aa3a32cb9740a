"""A script that asks xmp.spawn for 8 processes, which torch_xla 2.9 refuses
(nprocs must be 1 or None): xlacli runs ``fn(0, ...)`` in one process."""

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
    xmp.spawn(_mp_fn, args=(3,), nprocs=8)
