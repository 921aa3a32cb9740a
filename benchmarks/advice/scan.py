"""Does the scan advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/scan.py [--depths 8 24] [--repeats 2]

For each depth, ``xlacli compile examples/advice/decoder_stack.py --steps 1``
gives the scan advice and its predicted compile-time saving. Then the same
model's forward is compiled in fresh processes (no xlacli, no debug switches),
plainly and with ``scan_layers`` (``DECODER_SCAN=1``), and the saving is read
from torch_xla's own ``CompileTime`` metric (median of the repeats). A
prediction more than 2x off its measurement fails the benchmark (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "advice" / "decoder_stack.py"


def worker() -> None:
    """Compile one forward of the example (settings from the environment); print seconds."""
    import importlib.util

    import torch_xla
    import torch_xla.debug.metrics as met

    spec = importlib.util.spec_from_file_location("decoder_stack", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device).eval()
    batch = module.get_inputs(0).to(device)
    torch_xla.sync()
    output = model(batch)  # kept alive: sync computes live tensors
    started = time.process_time()
    torch_xla.sync()
    cpu_s = time.process_time() - started  # every thread's CPU: less sensitive to load
    del output
    data = met.metric_data("CompileTime")
    total = (data[1] if data else 0) / 1e9
    print(json.dumps({"compile_s": total, "cpu_s": cpu_s, "compiles": data[0] if data else 0}))


def measured(depth: int, scan: bool, repeats: int) -> tuple[float, float, int]:
    env = {**os.environ, "DECODER_DEPTH": str(depth), "DECODER_SCAN": "1" if scan else "0"}
    env.setdefault("PJRT_DEVICE", "CPU")
    runs = []
    for _ in range(repeats):
        out = subprocess.run(
            [sys.executable, __file__, "--worker"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    # The least of the repeats: on a shared machine, noise only ever adds time.
    return min(r["compile_s"] for r in runs), min(r["cpu_s"] for r in runs), runs[0]["compiles"]


def predicted(depth: int, out: Path) -> dict:
    env = {**os.environ, "DECODER_DEPTH": str(depth), "DECODER_SCAN": "0", "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-m", "xlacli", "compile", str(EXAMPLE), "--steps", "1",
         "--format", "json", "--out", str(out), "--force"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    advice = report["scan_advice"]
    return advice[0] if advice else {}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--depths", type=int, nargs="+", default=[8, 24])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    failed = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in args.depths:
            advice = predicted(depth, Path(tmp) / f"d{depth}")
            plain, plain_cpu, _ = measured(depth, False, args.repeats)
            scan, scan_cpu, _ = measured(depth, True, args.repeats)
            saving = plain - scan
            # xlacli's predicted share of the compile saved, applied to the clean plain compile
            fraction = advice.get("predicted_saving_time_s", 0.0) / advice.get(
                "graph_compile_time_s", 1
            )
            guess = fraction * plain
            ratio = guess / saving if saving > 0 else float("inf")
            ok = bool(advice) and 0.5 <= ratio <= 2.0
            failed |= not ok
            rows.append((depth, advice, plain, plain_cpu, scan, scan_cpu, guess, saving, ratio, ok))
    print(
        "| layers | advice: share, saving | plain compile (CPU) | scan_layers compile (CPU)"
        " | predicted saving | measured saving | predicted / measured |"
    )
    print("|---|---|---|---|---|---|---|")
    for depth, advice, plain, plain_cpu, scan, scan_cpu, guess, saving, ratio, ok in rows:
        print(
            f"| {depth} | {advice.get('share', 0):.0%},"
            f" {advice.get('predicted_saving_time_s', 0):.2f} s"
            f" of {advice.get('graph_compile_time_s', 0):.2f} s"
            f" | {plain:.2f} s ({plain_cpu:.2f} s) | {scan:.2f} s ({scan_cpu:.2f} s)"
            f" | {guess:.2f} s | {saving:.2f} s | {ratio:.2f}{'' if ok else ' FAIL'} |"
        )
    if len(rows) >= 2:
        (d0, *_rest0), (d1, *_rest1) = rows[0], rows[-1]
        print(
            f"\ncompile time growth {d0} -> {d1} layers: plain {rows[-1][2] / rows[0][2]:.2f}x,"
            f" scan_layers {rows[-1][4] / rows[0][4]:.2f}x"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
