"""The reference: the steps ``xlacli compile`` runs, with torch_xla alone.

    python benchmarks/zoo/bare.py CASE MODE STEPS OUT.json
    python benchmarks/zoo/bare.py --script SCRIPT OUT.json -- ARGS

Writes torch_xla's own UncachedCompile and ExecuteComputation counters.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
COUNTERS = ("UncachedCompile", "ExecuteComputation")


def run_case(name: str, mode: str, steps: int) -> None:
    import torch
    import torch_xla

    from benchmarks.zoo.cases import CASES

    case = CASES[name]
    assert case.build is not None
    model, batch = case.build()
    model.train(mode == "training")
    device = torch_xla.device()
    model = model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2) if mode == "training" else None
    for _ in range(steps):
        moved = _to(batch, device)
        if optimizer is None:
            with torch.no_grad():
                output = _call(model, moved)
        else:
            optimizer.zero_grad(set_to_none=True)
            output = _call(model, moved)
            _loss(output).backward()
            optimizer.step()
        torch_xla.sync()
        del output


def _to(batch, device):
    if isinstance(batch, dict):
        return {key: _to(value, device) for key, value in batch.items()}
    if isinstance(batch, (tuple, list)):
        return type(batch)(_to(value, device) for value in batch)
    return batch.to(device) if hasattr(batch, "to") else batch


def _call(model, batch):
    return model(**batch) if isinstance(batch, dict) else model(*batch)


def _loss(output):
    loss = output.get("loss") if isinstance(output, dict) else getattr(output, "loss", None)
    if loss is not None:
        return loss
    leaves = list(output.values()) if isinstance(output, dict) else [output]
    tensor = leaves[0][0] if isinstance(leaves[0], (tuple, list)) else leaves[0]
    return tensor.float().sum()


def write_counters(out: str) -> None:
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    xm.wait_device_ops()
    Path(out).write_text(json.dumps({name: met.counter_value(name) or 0 for name in COUNTERS}))


def main(argv: list[str]) -> None:
    if argv[0] == "--script":
        script, out, *rest = argv[1:]
        args = rest[1:] if rest[:1] == ["--"] else rest
        sys.argv = [script, *args]
        sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
        try:
            runpy.run_path(script, run_name="__main__")
        finally:
            write_counters(out)
        return
    name, mode, steps, out = argv
    sys.path.insert(0, str(REPO))
    run_case(name, mode, int(steps))
    write_counters(out)


if __name__ == "__main__":
    main(sys.argv[1:])
