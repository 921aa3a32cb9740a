"""``python bare_counters.py OUT.json SCRIPT ARGS...``: run SCRIPT as ``python
SCRIPT ARGS`` would, without xlacli, then write torch_xla's own compile and
execution counters to OUT.json (the reference the script-mode tests compare with)."""

import json
import os
import runpy
import sys

out, script, *args = sys.argv[1:]
sys.argv = [script, *args]
sys.path[0] = os.path.dirname(os.path.abspath(script))
try:
    runpy.run_path(script, run_name="__main__")
finally:
    import torch_xla.core.xla_model as xm
    import torch_xla.debug.metrics as met

    xm.wait_device_ops()
    names = ("UncachedCompile", "ExecuteComputation", "ExecuteReplicated")
    counts = {name: met.counter_value(name) or 0 for name in names}
    dynamo = sys.modules.get("torch._dynamo.utils")  # torch.compile's own counters
    counts["dynamo"] = {k: dict(v) for k, v in dynamo.counters.items() if v} if dynamo else {}
    with open(out, "w") as handle:
        json.dump(counts, handle)
