"""Does the value-read advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/value_reads.py [--steps 30] [--repeats 3]

``xlacli compile examples/advice/logging_loop.py`` ranks the loop's per-step
``loss.item()`` by its cost per step: the host's median time inside the read
(the forced graph built, run, waited for and copied), wall and CPU. The same
loop then runs in a fresh process (no xlacli) with the read as written and with
the advised ``xm.add_step_closure``, alternating step by step, so that a shared
machine's load falls on both alike; each pair of neighbouring steps gives one
saving (``torch_xla.sync()`` and waiting for the device included), wall and
process CPU. Each repeat is one prediction and one measurement taken back to
back; the benchmark compares the medians over the repeats. A predicted saving
more than 2x off the measured one, in wall or in CPU time, fails (exit 1).
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
WARMUP = 3  # pairs: the first steps compile


def worker(steps: int) -> None:
    """Alternate the two forms step by step in one process; print each pair's saving."""
    import torch_xla
    import torch_xla.core.xla_model as xm

    spec = importlib.util.spec_from_file_location("logging_loop", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device)
    times: list[tuple[float, float]] = []  # (wall s, CPU s) of each step, forms alternating
    for step in range(2 * steps):
        module.IN_CLOSURE = step % 2 == 1  # read by step() at each call
        batch = module.get_inputs(step).to(device)
        wall, cpu = time.perf_counter(), time.process_time()
        module.step(model, batch, step)
        torch_xla.sync()
        xm.wait_device_ops()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
    assert len(module.LOSSES) == 2 * steps  # every step logged its loss
    pairs = list(zip(times[::2], times[1::2], strict=True))[WARMUP:]
    print(
        json.dumps(
            {
                "as_written_ms": 1000 * statistics.median(w for (w, _), _ in pairs),
                "closure_ms": 1000 * statistics.median(w for _, (w, _) in pairs),
                "saving_ms": 1000 * statistics.median(a[0] - b[0] for a, b in pairs),
                "saving_cpu_ms": 1000 * statistics.median(a[1] - b[1] for a, b in pairs),
            }
        )
    )


def measured(steps: int) -> dict:
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
        [sys.executable, "-m", "xlacli", "compile", str(EXAMPLE), "--steps", "10",
         "--format", "json", "--out", str(out), "--force"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)["value_read_costs"][0]


def ratio(guess: float, saving: float) -> float:
    return guess / saving if saving > 0 else float("inf")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for repeat in range(args.repeats):  # a prediction and a measurement back to back
            cost = predicted(Path(tmp) / f"run{repeat}")
            rows.append((cost, measured(args.steps)))
    cost = rows[0][0]
    print(f"read: {cost['source']} ({cost['kind']}); fix: {cost['fix']}")
    print(
        "| repeat | step, as written | with the step closure | measured saving (CPU)"
        " | predicted saving (CPU) |"
    )
    print("|---|---|---|---|---|")
    for index, (cost, found) in enumerate(rows, 1):
        print(
            f"| {index} | {found['as_written_ms']:.2f} ms | {found['closure_ms']:.2f} ms"
            f" | {found['saving_ms']:.2f} ms ({found['saving_cpu_ms']:.2f} ms)"
            f" | {guess_ms(cost):.2f} ms ({guess_cpu_ms(cost):.2f} ms) |"
        )
    wall = ratio(
        statistics.median(guess_ms(c) for c, _ in rows),
        statistics.median(m["saving_ms"] for _, m in rows),
    )
    cpu = ratio(
        statistics.median(guess_cpu_ms(c) for c, _ in rows),
        statistics.median(m["saving_cpu_ms"] for _, m in rows),
    )
    ok = 0.5 <= cpu <= 2.0
    print(
        f"\nmedians, predicted / measured: CPU {cpu:.2f}{'' if ok else ' FAIL'}, wall {wall:.2f}"
        f" (load average {os.getloadavg()[0]:.1f})"
    )
    return 0 if ok else 1


def guess_ms(cost: dict) -> float:
    return 1000 * cost["extra_time_s"]


def guess_cpu_ms(cost: dict) -> float:
    return 1000 * (cost.get("read_cpu_time_s") or 0.0) * cost["reads_per_step"]


if __name__ == "__main__":
    sys.exit(main())
