"""Does the scan advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/scan.py [--depths 8 32 64 96] [--repeats 2]

For each depth, ``xlacli compile examples/advice/decoder_stack.py --steps 1``
gives the scan advice: the compile time ``scan_layers`` would give, or that it
would not pay. Then the same model's forward is compiled in fresh processes (no
xlacli, no debug switches), plainly and with ``scan_layers`` (``DECODER_SCAN=1``),
alternating, and each form's cost is the CPU time of the compiling sync (every
thread's: a shared machine's load inflates wall time, not CPU time), least of
the repeats; torch_xla's ``CompileTime`` (wall) is shown beside it. The predicted
saving is xlacli's predicted share of the compile saved, applied to the clean
plain compile. A depth passes when the prediction is within 2x of the measured
saving, or when the advisor said scanning would not pay and it saves under 10%
of the plain compile; anything else fails the benchmark (exit 1).
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
# Not advised and right when scanning saves under this share of the plain compile.
NOT_WORTH = 0.1


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


def measured(depth: int, repeats: int) -> dict[bool, tuple[float, float]]:
    """Each form's (CPU s, CompileTime wall s), least of the repeats; forms alternate."""
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(repeats):
        for scan in (False, True):
            env = {**os.environ, "DECODER_DEPTH": str(depth), "DECODER_SCAN": "1" if scan else "0"}
            env.setdefault("PJRT_DEVICE", "CPU")
            out = subprocess.run(
                [sys.executable, __file__, "--worker"],
                env=env, capture_output=True, text=True, check=True,
            )  # fmt: skip
            runs[scan].append(json.loads(out.stdout.strip().splitlines()[-1]))
    # The least of the repeats: on a shared machine, noise only ever adds time.
    return {
        scan: (min(r["cpu_s"] for r in found), min(r["compile_s"] for r in found))
        for scan, found in runs.items()
    }


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


def judge(advice: dict, plain: float, saving: float) -> tuple[float, str]:
    """The predicted saving and the verdict: ok, silent ok, or FAIL."""
    if not advice:
        return 0.0, "FAIL (no advice)"
    compile_s = advice.get("graph_compile_time_s") or 1.0
    guess = advice.get("predicted_saving_time_s", 0.0) / compile_s * plain
    if not advice.get("pays"):
        ok = saving < NOT_WORTH * plain
        return guess, "not advised, right" if ok else "FAIL (not advised, but it pays)"
    ratio = guess / saving if saving > 0 else float("inf")
    return guess, f"{ratio:.2f}" + ("" if 0.5 <= ratio <= 2.0 else " FAIL")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--depths", type=int, nargs="+", default=[8, 32, 64, 96])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in args.depths:
            advice = predicted(depth, Path(tmp) / f"d{depth}")
            forms = measured(depth, args.repeats)
            (plain, plain_wall), (scan, scan_wall) = forms[False], forms[True]
            guess, verdict = judge(advice, plain, plain - scan)
            rows.append((depth, advice, plain, plain_wall, scan, scan_wall, guess, verdict))
    print(
        "| layers | advice: share, verdict, compile | plain: CPU (wall) | scan_layers: CPU (wall)"
        " | predicted saving | measured saving | predicted / measured |"
    )
    print("|---|---|---|---|---|---|---|")
    for depth, advice, plain, plain_wall, scan, scan_wall, guess, verdict in rows:
        said = "advised" if advice.get("pays") else "would not pay"
        print(
            f"| {depth} | {advice.get('share', 0):.0%}, {said},"
            f" {advice.get('graph_compile_time_s', 0):.2f} s"
            f" -> {advice.get('predicted_compile_time_s', 0):.2f} s"
            f" | {plain:.2f} s ({plain_wall:.2f} s) | {scan:.2f} s ({scan_wall:.2f} s)"
            f" | {guess:.2f} s | {plain - scan:.2f} s | {verdict} |"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        print(
            f"\nCPU compile time growth {first[0]} -> {last[0]} layers:"
            f" plain {last[2] / first[2]:.2f}x, scan_layers {last[4] / first[4]:.2f}x"
            f" (load average {os.getloadavg()[0]:.1f})"
        )
    return 1 if any("FAIL" in row[-1] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
