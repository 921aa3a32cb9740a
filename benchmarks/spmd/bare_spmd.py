"""The baseline: a bare torch_xla loop running an SPMD model's steps as xlacli does.

    CPU_NUM_DEVICES=4 python benchmarks/spmd/bare_spmd.py examples/spmd/transformer_block.py 3

Imports the model file first (its ``xr.use_spmd()`` runs before the device is
touched), then runs ``step(model, batch, step)`` and ``torch_xla.sync()`` per step,
waiting for the device. Prints torch_xla's counters as JSON on the last line,
so the end-to-end tests compare xlacli's counts with a bare run's.
"""

from __future__ import annotations

import importlib.util
import json
import sys

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met


def main(model_path: str, steps: int) -> None:
    spec = importlib.util.spec_from_file_location("model", model_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.get_model()
    device = torch_xla.device()
    model = model.to(device)
    for step in range(steps):
        batch = module.get_inputs(step).to(device)
        result = module.step(model, batch, step)
        torch_xla.sync()
        xm.wait_device_ops()
        del result
    counters = {name: met.counter_value(name) or 0 for name in met.counter_names()}
    print(json.dumps(counters, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
