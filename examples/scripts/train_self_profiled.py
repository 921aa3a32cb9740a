"""A training loop that drives torch_xla's profiler itself, the way torch_xla's
own ``examples/debug/train_resnet_profile.py`` does: ``xp.start_server`` then
``xp.trace_detached`` for a few seconds. ``xlacli profile`` sees the script's
own profiling, stands aside and still reports steps, compiles and graphs.

    python examples/scripts/train_self_profiled.py --steps 8
    xlacli profile examples/scripts/train_self_profiled.py -- --steps 8
"""

import argparse
import tempfile
import time

import torch
import torch_xla
import torch_xla.debug.profiler as xp
from torch import nn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=3.0, help="train at least this long")
    parser.add_argument("--port", type=int, default=9612)
    parser.add_argument("--logdir", default=None)
    parser.add_argument(
        "--trace-at-step", type=int, default=0, help="start the trace after the compiles"
    )
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    server = xp.start_server(args.port)  # the server stops when this is collected
    logdir = args.logdir or tempfile.mkdtemp(prefix="self-profiled-")
    # The trace runs in a thread while the loop trains: at least --seconds,
    # so the trace has steps to see.
    duration_ms = int(1000 * args.seconds) // 2
    deadline = time.monotonic() + args.seconds
    step = 0
    while step < args.steps or time.monotonic() < deadline:
        if step == args.trace_at_step:
            xp.trace_detached(f"localhost:{args.port}", logdir, duration_ms=duration_ms)
        inputs = torch.randn(8, 32).to(device)
        with xp.StepTrace("train", step_num=step):
            loss = model(inputs).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        step += 1
    torch_xla.sync()
    print(f"done after {step} steps, loss {loss.item():.4f}, trace in {logdir}")
    del server


if __name__ == "__main__":
    main()
