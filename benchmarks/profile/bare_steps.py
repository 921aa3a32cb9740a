"""A bare torch_xla loop timing each step the way xlacli's harness does:
from getting the batch to the end of ``torch_xla.sync()`` (no device wait).

    python benchmarks/profile/bare_steps.py examples/mlp.py 40 > times.json
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time

import torch
import torch_xla
import torch_xla.core.xla_model as xm


def main(model_path: str, steps: int) -> None:
    spec = importlib.util.spec_from_file_location("model", model_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device).eval()
    times = []
    for step in range(steps):
        started = time.perf_counter()
        batch = module.get_inputs(step).to(device)
        with torch.no_grad():
            output = model(batch)
        torch_xla.sync()
        times.append(time.perf_counter() - started)
        del output
    xm.wait_device_ops()
    json.dump(times, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
