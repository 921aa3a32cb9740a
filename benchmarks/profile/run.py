"""Does ``xlacli profile`` distort what it measures? Side by side with a bare loop.

    python benchmarks/profile/run.py [--repeats 3] [--steps 40] [--models examples/mlp.py]

The bare loop and ``xlacli profile`` run the same model for the same steps,
alternating, each in a fresh process. Compared: the median step time of the
steady-state steps outside the trace window (xlacli's warm-up steps after the
first compiles, as its events.jsonl records them) against the same steps of
the bare loop, timed the same way. Goal: a ratio within 1.02.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)

from xlacli.run.events import read_events  # noqa: E402

MODELS = ("examples/mlp.py", "examples/transformer.py")
SKIP = 5  # the first steps compile


def bare(model: str, steps: int) -> float:
    completed = subprocess.run(
        [sys.executable, "benchmarks/profile/bare_steps.py", model, str(steps)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        env=installed_env(),
    )
    return statistics.median(json.loads(completed.stdout)[SKIP:])


def xlacli(model: str, steps: int, work: Path) -> float:
    out = work / f"run-{len(list(work.iterdir()))}"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "xlacli",
            "profile",
            model,
            "--warmup",
            str(steps),
            "--steps",
            "5",
            "--out",
            str(out),
            "--format",
            "json",
        ],
        cwd=REPO,
        check=True,
        capture_output=True,
        env=installed_env(),
    )
    steps = read_events(out / "events.jsonl").steps  # a repeated step is a one-line "same"
    times = [e["wall_time_s"] for e in steps if not e["traced"]]
    return statistics.median(times[SKIP:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--models", nargs="+", default=MODELS, help="model files to compare")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xlacli-profile-bench-"))
    print(
        "| model | bare loop, median step (ms) "
        "| xlacli profile, median step outside the window (ms) | ratio |"
    )
    print("|---|---|---|---|")
    try:
        for model in args.models:
            pairs = [
                (bare(model, args.steps), xlacli(model, args.steps, work))
                for _ in range(args.repeats)
            ]
            bare_ms = statistics.median(b for b, _ in pairs) * 1e3
            tool_ms = statistics.median(t for _, t in pairs) * 1e3
            print(f"| {model} | {bare_ms:.3f} | {tool_ms:.3f} | {tool_ms / bare_ms:.3f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
