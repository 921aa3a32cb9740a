"""Does ``xlacli profile`` distort what it measures? Side by side with a bare loop.

    python benchmarks/profile/run.py [--repeats 3] [--steps 40] [--models examples/mlp.py]

The bare loop and ``xlacli profile`` run the same model for the same steps,
alternating, each in a fresh process. Compared: the median step time of the
steady-state steps outside the trace window (xlacli's warm-up steps after the
first compiles, as its events.jsonl records them) against the same steps of
the bare loop, timed the same way. Goal: a ratio within 1.02. A third side,
the bare loop under torch_xla's per-execution analysis alone
(``PT_XLA_DEBUG_LEVEL=2``, which the profile sets: the only record of which
graph each execution ran), separates torch_xla's part of the cost from xlacli's.

On a shared 2-CPU machine a bare loop's median step swings by 15-25% from
one process to the next (the host thread and XLA's execution thread on one
core or on two), far more than 2%: the table gives the median of the
per-process medians with their range, and the same for the lower decile of
each process's steps (the steps nothing else disturbed). ``--pin CPU`` runs
both sides on that one CPU (the host thread and XLA's execution thread always
share it): slower steps, but the two modes of an unpinned run are gone.
"""

from __future__ import annotations

import argparse
import json
import os
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

from xlacli.capture.env import PROFILE_MAX_FRAMES  # noqa: E402
from xlacli.run_folder.events import read_events  # noqa: E402

MODELS = ("examples/mlp.py", "examples/transformer.py")
SKIP = 5  # the first steps compile


def pinned(cpu: int | None):
    """For ``preexec_fn``: the process (and all it starts) on ``cpu`` only."""
    if cpu is None:
        return None
    return lambda: os.sched_setaffinity(0, {cpu})


def bare(
    model: str, steps: int, cpu: int | None = None, debug_log: Path | None = None
) -> list[float]:
    """The bare loop's steps; with ``debug_log``, under torch_xla's own
    per-execution analysis (``PT_XLA_DEBUG_LEVEL=2``) alone, the part of the
    profile's cost that is torch_xla's: the only record of the graph each
    execution ran."""
    debug = {} if debug_log is None else {
        "PT_XLA_DEBUG_LEVEL": "2",
        "PT_XLA_DEBUG_FILE": str(debug_log),
        "PT_XLA_DEBUG_MAX_FRAME": str(PROFILE_MAX_FRAMES),
    }  # fmt: skip
    completed = subprocess.run(
        [sys.executable, "benchmarks/profile/bare_steps.py", model, str(steps)],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
        env=installed_env(**debug),
        preexec_fn=pinned(cpu),
    )
    if debug_log is not None:
        debug_log.unlink(missing_ok=True)
    return json.loads(completed.stdout)[SKIP:]


def xlacli(model: str, steps: int, work: Path, cpu: int | None = None) -> list[float]:
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
        preexec_fn=pinned(cpu),
    )
    steps = read_events(out / "events.jsonl").steps  # a repeated step is a one-line "same"
    times = [e["wall_time_s"] for e in steps if not e["traced"]]
    return times[SKIP:]


def decile(times: list[float]) -> float:
    return sorted(times)[len(times) // 10]


def summary(runs: list[list[float]], statistic) -> tuple[float, float, float]:
    """The median over processes of ``statistic``, with its range (ms)."""
    values = [statistic(times) * 1e3 for times in runs]
    return statistics.median(values), min(values), max(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--models", nargs="+", default=MODELS, help="model files to compare")
    parser.add_argument("--pin", type=int, metavar="CPU", help="run both sides on this CPU only")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="xlacli-profile-bench-"))
    print(
        "| model | statistic | bare loop (ms, range) | bare loop, torch_xla's execution "
        "analysis on (ms, range) | xlacli profile, outside the window (ms, range) "
        "| ratio to bare | ratio to bare with the analysis |"
    )
    print("|---|---|---|---|---|---|---|")
    try:
        for model in args.models:
            bare_runs, analysed_runs, tool_runs = [], [], []
            for _ in range(args.repeats):  # alternating: the machine's drift hits all three
                bare_runs.append(bare(model, args.steps, args.pin))
                analysed_runs.append(bare(model, args.steps, args.pin, work / "debug.txt"))
                tool_runs.append(xlacli(model, args.steps, work, args.pin))
            for name, statistic in (("median step", statistics.median), ("lower decile", decile)):
                b = summary(bare_runs, statistic)
                a = summary(analysed_runs, statistic)
                t = summary(tool_runs, statistic)
                print(
                    f"| {model} | {name} | {b[0]:.3f} ({b[1]:.3f}-{b[2]:.3f}) "
                    f"| {a[0]:.3f} ({a[1]:.3f}-{a[2]:.3f}) "
                    f"| {t[0]:.3f} ({t[1]:.3f}-{t[2]:.3f}) "
                    f"| {t[0] / b[0]:.3f} | {t[0] / a[0]:.3f} |"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
