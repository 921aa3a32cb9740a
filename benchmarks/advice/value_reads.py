"""Does the value-read advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/value_reads.py [--steps 30]

``xlacli compile examples/advice/logging_loop.py`` ranks the loop's per-step
``loss.item()`` by its cost per step (the forced graph's executions, median
time). The same loop then runs in a fresh process (no xlacli) with the read as
written and with the advised ``xm.add_step_closure``, alternating step by step
(so a shared machine's load falls on both alike); each form's step time
(``torch_xla.sync()`` and waiting for the device included) is the median after
its first 3 steps. A predicted saving more than 2x off the measured one fails
the benchmark (exit 1).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "advice" / "logging_loop.py"
WARMUP = 3


def worker(steps: int) -> None:
    """Alternate the two forms step by step in one process, so that the load of a
    shared machine falls on both alike; print each form's median step time."""
    import torch_xla
    import torch_xla.core.xla_model as xm

    spec = importlib.util.spec_from_file_location("logging_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device)
    times: dict[bool, list[float]] = {False: [], True: []}
    for step in range(2 * steps):
        closure = step % 2 == 1
        module.IN_CLOSURE = closure  # read by step() at each call
        batch = module.get_inputs(step).to(device)
        started = time.perf_counter()
        module.step(model, batch, step)
        torch_xla.sync()
        xm.wait_device_ops()
        times[closure].append(time.perf_counter() - started)
    assert len(module.LOSSES) == 2 * steps  # every step logged its loss
    medians = {form: 1000 * statistics.median(t[WARMUP:]) for form, t in times.items()}
    print(json.dumps({"as_written_ms": medians[False], "closure_ms": medians[True]}))


def step_ms(steps: int) -> dict:
    env = {**os.environ}
    env.setdefault("PJRT_DEVICE", "CPU")
    out = subprocess.run(
        [sys.executable, __file__, "--worker", "--steps", str(steps)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def predicted(out: Path) -> dict:
    env = {**os.environ, "LOG_IN_CLOSURE": "0", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "xlacli", "compile", str(EXAMPLE), "--steps", "8",
         "--format", "json", "--out", str(out), "--force"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)["value_read_costs"][0]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        cost = predicted(Path(tmp) / "run")
    measured = step_ms(args.steps)
    before, after = measured["as_written_ms"], measured["closure_ms"]
    saving = before - after
    guess = 1000 * cost["extra_time_s"]
    ratio = guess / saving if saving > 0 else float("inf")
    ok = 0.5 <= ratio <= 2.0
    print(f"read: {cost['source']} ({cost['kind']}); fix: {cost['fix']}")
    print(
        "| step time, as written | with the step closure | measured saving"
        " | predicted saving | predicted / measured |"
    )
    print("|---|---|---|---|---|")
    print(
        f"| {before:.2f} ms | {after:.2f} ms | {saving:.2f} ms | {guess:.2f} ms"
        f" | {ratio:.2f}{'' if ok else ' FAIL'} |"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
