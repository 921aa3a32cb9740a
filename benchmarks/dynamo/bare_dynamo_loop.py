"""The baseline: a bare torch.compile(backend="openxla") loop doing the steps
``xlacli compile --mode dynamo`` does; ``--observe`` adds xlacli's Dynamo
observer (its hooks and a read after each step) and nothing else.

python benchmarks/dynamo/bare_dynamo_loop.py examples/transformer.py 3 [--observe]
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import torch
import torch_xla
import torch_xla.core.xla_model as xm


def to_device(batch: Any, device: torch.device) -> Any:
    if isinstance(batch, dict):
        return {key: value.to(device) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        return tuple(value.to(device) for value in batch)
    return batch.to(device)


def call(model: Any, batch: Any) -> Any:
    if isinstance(batch, dict):
        return model(**batch)
    return model(*batch) if isinstance(batch, tuple) else model(batch)


def main(model_path: str, steps: int, observe: bool) -> None:
    spec = importlib.util.spec_from_file_location("model", model_path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    observer = None
    if observe:
        from xlacli.child.dynamo import DynamoObserver

        observer = DynamoObserver()
    device = torch_xla.device()
    model = torch.compile(module.get_model().to(device).eval(), backend="openxla")
    for step in range(steps):
        batch = to_device(module.get_inputs(step), device)
        with torch.no_grad():
            output = call(model, batch)
        torch_xla.sync()
        xm.wait_device_ops()
        del output
        if observer is not None:
            observer.delta()
    if observer is not None:
        observer.summary()
        observer.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), "--observe" in sys.argv[3:])
