"""Cost against the graph's size: the decoder of ``decoder.py`` at several depths (issue 40).

    python benchmarks/scale/graph_size.py [--layers 8 24 50] [--steps 5] [--repeats N]
        [--tree PATH] [--json F]

For each depth: the bare script (``python decoder.py --layers N``), the same
script under ``xlacli compile``, and the parent's own work apart: the run
folder's report removed and rebuilt by ``xlacli report RUN`` (which rebuilds
a report that was never written, in the parent only, from the files the
child left). Each is a fresh process; wall and CPU seconds (user + system,
children included) of each, the time from the child's last write to the
report's (the parent's own work after the child ended), the graphs' IR node
counts and HLO instruction counts (before and after XLA's optimization), the
load average, and the verdict line. ``--repeats N`` runs N pairs a depth,
alternating which side goes first, and takes the median of the pairs' ratios
(this machine's runs of the same bare script vary by a third). ``--tree`` runs
another checkout's xlacli (the "before" of a change). ``--steps 1`` keeps one
graph (the first step's): the row of a graph of 100k+ HLO instructions
(``--layers 150``), whose XLA:CPU compile alone takes minutes a graph.
``plot.py --graph-size`` draws the parent's time against the instructions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
from installed import installed_env  # noqa: E402  (both sides as a user's install runs them)

DECODER = REPO / "benchmarks" / "scale" / "decoder.py"


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(command: list[str], cwd: Path, tree: Path) -> tuple[float, float, str]:
    cpu, started = _children_cpu(), time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, check=True, capture_output=True, text=True, env=installed_env(tree)
    )
    return time.perf_counter() - started, _children_cpu() - cpu, done.stdout


def measure(
    layers: int, tree: Path, work: Path, steps: int = 5, repeats: int = 1
) -> dict[str, object]:
    """One depth: ``repeats`` pairs of the bare script and the script under xlacli
    (alternating which goes first, so a drift of the machine's speed falls on
    both), then the rebuild of the last run folder's report."""
    script = work / "decoder.py"
    shutil.copy(DECODER, script)
    python = sys.executable
    load = os.getloadavg()[0]
    script_args = ["--layers", str(layers), "--steps", str(steps)]
    run = work / f"run-{layers}"
    command = [python, "-m", "xlacli", "compile", str(script), "--out", str(run), "--force"]
    bares: list[tuple[float, float, str]] = []
    runs: list[tuple[float, float, str]] = []
    after_child: list[float] = []
    for pair in range(repeats):
        for side in ("bare", "xlacli") if pair % 2 == 0 else ("xlacli", "bare"):
            if side == "bare":
                bares.append(_timed([python, str(script), *script_args], work, tree))
                continue
            runs.append(_timed([*command, "--", *script_args], work, tree))
            # The child writes metrics.txt and its last events when it ends; the
            # parent writes report.json when its analysis is done.
            ends = [(run / name).stat().st_mtime for name in ("events.jsonl", "metrics.txt")]
            child_end = max(ends)
            after_child.append((run / "report.json").stat().st_mtime - child_end)
    rebuilt = work / f"rebuilt-{layers}"
    shutil.rmtree(rebuilt, ignore_errors=True)
    shutil.copytree(run, rebuilt)
    (rebuilt / "report.json").unlink()
    parent = _timed([python, "-m", "xlacli", "report", str(rebuilt)], work, tree)
    report = json.loads((run / "report.json").read_text())
    graphs = report["graphs"]
    ratios = [xlacli[0] / bare[0] for bare, xlacli in zip(bares, runs, strict=True)]
    return {
        "layers": layers,
        "steps": steps,
        "tree": str(tree),
        "ir_nodes": [graph["ir_nodes"] for graph in graphs],
        "hlo_instructions": [graph["hlo_instructions"] for graph in graphs],
        "optimized_hlo_instructions": [graph["optimized_hlo_instructions"] for graph in graphs],
        "bare_s": round(statistics.median(b[0] for b in bares), 2),
        "bare_cpu_s": round(statistics.median(b[1] for b in bares), 2),
        "xlacli_s": round(statistics.median(r[0] for r in runs), 2),
        "xlacli_cpu_s": round(statistics.median(r[1] for r in runs), 2),
        # The median of the pairs' ratios (one pair: its ratio).
        "ratio": round(statistics.median(ratios), 2),
        "pair_ratios": [round(ratio, 2) for ratio in ratios],
        "parent_after_child_s": round(statistics.median(after_child), 2),
        "rebuild_s": round(parent[0], 2),
        "rebuild_cpu_s": round(parent[1], 2),
        "verdict": runs[-1][2].splitlines()[0] if runs[-1][2] else "",
        "load": [round(load, 1), round(os.getloadavg()[0], 1)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, nargs="+", default=[8, 24, 50])
    parser.add_argument("--steps", type=int, default=5, help="the decoder's steps (1: one graph)")
    parser.add_argument("--tree", type=Path, default=REPO, help="the xlacli checkout to run")
    parser.add_argument("--json", type=Path, help="append one JSON line per depth")
    parser.add_argument(
        "--repeats", type=int, default=1, help="pairs per depth (ratio: the pairs' median)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xlacli-graph-size-") as folder:
        for layers in args.layers:
            row = measure(layers, args.tree.resolve(), Path(folder), args.steps, args.repeats)
            print(json.dumps(row), flush=True)
            if args.json is not None:
                with args.json.open("a") as out:
                    out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
