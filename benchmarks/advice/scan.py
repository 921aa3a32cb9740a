"""Does the scan advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/scan.py [--depths 8 32 64 96] [--repeats 2]
    nice -n 19 python benchmarks/advice/scan.py --train [--depths 8 24 48] [--optimizer adamw]

For each depth, ``xlacli compile examples/advice/decoder_stack.py --steps 1``
(with ``--train --optimizer adamw``: a training step, forward, backward and the
optimizer's update in one graph) gives the scan advice: the compile time
``scan_layers`` would give, or why it is not advised. Then the same step is
compiled in fresh processes (no xlacli, no debug switches), plainly and with
``scan_layers`` (``DECODER_SCAN=1``), alternating, and each form's cost is the
CPU time of the compiling sync (every thread's: a shared machine's load inflates
wall time, not CPU time), least of the repeats; torch_xla's ``CompileTime``
(wall) is shown beside it. The predicted saving is xlacli's predicted share of
the compile saved, applied to the clean plain compile. A depth passes when the
prediction is within 2x of the measured saving, or when the advisor did not
advise it and it saves under 10% of the plain compile; anything else fails the
benchmark (exit 1).
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
# The worker's settings beside the example's own (DECODER_DEPTH, DECODER_SCAN).
TRAIN_ENV = "SCAN_BENCH_OPTIMIZER"  # set: a training step with this optimizer


def worker() -> None:
    """Compile one step of the example (settings from the environment); print seconds."""
    import importlib.util

    import torch
    import torch_xla
    import torch_xla.debug.metrics as met

    spec = importlib.util.spec_from_file_location("decoder_stack", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    device = torch_xla.device()
    model = module.get_model().to(device)
    batch = module.get_inputs(0).to(device)
    torch_xla.sync()
    optimizer_name = os.environ.get(TRAIN_ENV)
    if optimizer_name:  # xlacli's --train step: forward, the loss, backward, the update
        optimizer = (
            torch.optim.AdamW(model.parameters(), lr=1e-3)
            if optimizer_name == "adamw"
            else torch.optim.SGD(model.parameters(), lr=1e-2)
        )
        optimizer.zero_grad(set_to_none=True)
        output = model(batch).float().sum()  # xlacli's loss without a loss_fn
        output.backward()
        optimizer.step()
    else:
        output = model.eval()(batch)  # kept alive: sync computes live tensors
    started = time.process_time()
    torch_xla.sync()
    cpu_s = time.process_time() - started  # every thread's CPU: less sensitive to load
    del output
    data = met.metric_data("CompileTime")
    total = (data[1] if data else 0) / 1e9
    print(json.dumps({"compile_s": total, "cpu_s": cpu_s, "compiles": data[0] if data else 0}))


def measured(depth: int, repeats: int, optimizer: str | None) -> dict[bool, tuple[float, float]]:
    """Each form's (CPU s, CompileTime wall s), least of the repeats; forms alternate."""
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for _ in range(repeats):
        for scan in (False, True):
            env = {**os.environ, "DECODER_DEPTH": str(depth), "DECODER_SCAN": "1" if scan else "0"}
            if optimizer:
                env[TRAIN_ENV] = optimizer
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


def predicted(depth: int, out: Path, optimizer: str | None) -> dict:
    env = {**os.environ, "DECODER_DEPTH": str(depth), "DECODER_SCAN": "0", "PYTHONPATH": str(REPO)}
    train = ["--train", "--optimizer", optimizer] if optimizer else []
    result = subprocess.run(
        [sys.executable, "-m", "xlacli", "compile", str(EXAMPLE), "--steps", "1", *train,
         "--format", "json", "--out", str(out), "--force"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(result.stdout)
    advice = report["scan_advice"]
    return advice[0] if advice else {}


def said(advice: dict) -> str:
    """The advice in a table cell: advised, or its reasons and the depth it needs."""
    if advice.get("pays"):
        return "advised"
    because = ", ".join(advice.get("not_advised_because", ())) or "would not pay"
    depth = advice.get("advised_from_layers", 0)
    return f"not advised ({because}), " + (f"from {depth} layers" if depth else "at no depth")


def judge(advice: dict, plain: float, saving: float) -> tuple[float, str]:
    """The predicted saving and the verdict: ok, silent ok, or FAIL."""
    if not advice:
        return 0.0, "FAIL (no advice)"
    compile_s = advice.get("graph_compile_time_s") or 1.0
    guess = advice.get("predicted_saving_time_s", 0.0) / compile_s * plain
    if not advice.get("pays"):
        ok = saving < NOT_WORTH * plain
        # beside the verdict, how near the predicted loss came to the measured one
        near = f" ({guess / saving:.2f})" if saving and guess / saving > 0 else ""
        return guess, ("not advised, right" if ok else "FAIL (not advised, but it pays)") + near
    ratio = guess / saving if saving > 0 else float("inf")
    return guess, f"{ratio:.2f}" + ("" if 0.5 <= ratio <= 2.0 else " FAIL")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--depths", type=int, nargs="+")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--train", action="store_true", help="a training step, not a forward")
    parser.add_argument("--optimizer", choices=("adamw", "sgd"), default="adamw")
    args = parser.parse_args()
    if args.worker:
        worker()
        return 0
    optimizer = args.optimizer if args.train else None
    depths = args.depths or ([8, 24, 48] if args.train else [8, 32, 64, 96])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for depth in depths:
            advice = predicted(depth, Path(tmp) / f"d{depth}", optimizer)
            forms = measured(depth, args.repeats, optimizer)
            (plain, plain_wall), (scan, scan_wall) = forms[False], forms[True]
            guess, verdict = judge(advice, plain, plain - scan)
            rows.append((depth, advice, plain, plain_wall, scan, scan_wall, guess, verdict))
    print(
        "| layers | advice: share, verdict, compile | plain: CPU (wall) | scan_layers: CPU (wall)"
        " | predicted saving | measured saving | predicted / measured |"
    )
    print("|---|---|---|---|---|---|---|")
    for depth, advice, plain, plain_wall, scan, scan_wall, guess, verdict in rows:
        print(
            f"| {depth} | {advice.get('share', 0):.0%}, {said(advice)},"
            f" {advice.get('graph_compile_time_s', 0):.2f} s"
            f" -> {advice.get('predicted_compile_time_s', 0):.2f} s"
            f" | {plain:.2f} s ({plain_wall:.2f} s) | {scan:.2f} s ({scan_wall:.2f} s)"
            f" | {guess:.2f} s | {plain - scan:.2f} s | {verdict} |"
        )
    if optimizer:
        shares = ", ".join(f"{row[0]}: {row[1].get('optimizer_share', 0):.0%}" for row in rows)
        print(f"\nThe optimizer's per-parameter update ({optimizer}), share of the graph: {shares}")
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
