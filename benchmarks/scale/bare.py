"""The baseline: a plain torch_xla loop over a model file, as xlacli's loop runs it.

python benchmarks/scale/bare.py examples/mlp.py 1000

The model file's ``step(model, batch, step)`` when it has one, else a forward
pass under ``no_grad``; then ``torch_xla.sync()``. Prints torch_xla's compile
and execution counts, which xlacli's report must equal.
"""

from __future__ import annotations

import importlib.util
import sys

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met


def main(model_path: str, steps: int) -> None:
    spec = importlib.util.spec_from_file_location("model", model_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device)
    user_step = getattr(module, "step", None)
    if user_step is None:
        model.eval()
    for index in range(steps):
        batch = module.get_inputs(index).to(device)
        if user_step is not None:
            result = user_step(model, batch, index)
        else:
            with torch.no_grad():
                result = model(batch)
        torch_xla.sync()
        del result
    xm.wait_device_ops()
    print(
        f"compiles={met.counter_value('UncachedCompile') or 0} "
        f"executions={met.counter_value('ExecuteComputation') or 0}"
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
