"""The baseline: a bare torch_xla loop doing the steps ``xlacli compile`` does.

python benchmarks/compile/bare_loop.py examples/mlp.py 2

With ``XLACLI_BENCH_MARK=FILE`` it writes a line to FILE once torch_xla is
imported (``run.py`` times start-up apart: xlacli's child writes its first
event at the same point).
"""

from __future__ import annotations

import importlib.util
import os
import sys

import torch
import torch_xla
import torch_xla.core.xla_model as xm

if "XLACLI_BENCH_MARK" in os.environ:
    with open(os.environ["XLACLI_BENCH_MARK"], "w") as mark:
        mark.write("imported\n")


def main(model_path: str, steps: int) -> None:
    spec = importlib.util.spec_from_file_location("model", model_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device).eval()
    for step in range(steps):
        batch = module.get_inputs(step).to(device)
        with torch.no_grad():
            output = model(batch)
        torch_xla.sync()
        del output
    xm.wait_device_ops()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
