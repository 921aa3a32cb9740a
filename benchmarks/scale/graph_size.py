"""Cost against the graph's size: the decoder of ``decoder.py`` at several depths (issue 40).

    python benchmarks/scale/graph_size.py [--layers 24 50] [--tree PATH] [--json out.jsonl]

For each depth: the bare script (``python decoder.py --layers N``), the same
script under ``xlacli compile``, and the parent's own work apart: the run
folder's report removed and rebuilt by ``xlacli report RUN`` (which rebuilds
a report that was never written, in the parent only, from the files the
child left). Each is a fresh process; wall and CPU seconds (user + system,
children included) of each, the time from the child's last write to the
report's (the parent's own work after the child ended), the graphs' IR node
counts, and the verdict line. ``--tree`` runs another checkout's xlacli (the "before" of a change).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
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


def measure(layers: int, tree: Path, work: Path) -> dict[str, object]:
    """One depth: bare, under xlacli, and the rebuild of the run folder's report."""
    script = work / "decoder.py"
    shutil.copy(DECODER, script)
    python = sys.executable
    bare = _timed([python, str(script), "--layers", str(layers)], work, tree)
    run = work / f"run-{layers}"
    command = [python, "-m", "xlacli", "compile", str(script), "--out", str(run), "--force"]
    xlacli = _timed([*command, "--", "--layers", str(layers)], work, tree)
    rebuilt = work / f"rebuilt-{layers}"
    shutil.rmtree(rebuilt, ignore_errors=True)
    shutil.copytree(run, rebuilt)
    (rebuilt / "report.json").unlink()
    parent = _timed([python, "-m", "xlacli", "report", str(rebuilt)], work, tree)
    report = json.loads((run / "report.json").read_text())
    # The child writes metrics.txt and its last events when it ends; the
    # parent writes report.json when its analysis is done.
    child_end = max((run / name).stat().st_mtime for name in ("events.jsonl", "metrics.txt"))
    after_child = (run / "report.json").stat().st_mtime - child_end
    return {
        "layers": layers,
        "tree": str(tree),
        "ir_nodes": [graph["ir_nodes"] for graph in report["graphs"]],
        "bare_s": round(bare[0], 2),
        "bare_cpu_s": round(bare[1], 2),
        "xlacli_s": round(xlacli[0], 2),
        "xlacli_cpu_s": round(xlacli[1], 2),
        "ratio": round(xlacli[0] / bare[0], 2),
        "parent_after_child_s": round(after_child, 2),
        "rebuild_s": round(parent[0], 2),
        "rebuild_cpu_s": round(parent[1], 2),
        "verdict": xlacli[2].splitlines()[0] if xlacli[2] else "",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, nargs="+", default=[24, 50])
    parser.add_argument("--tree", type=Path, default=REPO, help="the xlacli checkout to run")
    parser.add_argument("--json", type=Path, help="append one JSON line per depth")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="xlacli-graph-size-") as folder:
        for layers in args.layers:
            row = measure(layers, args.tree.resolve(), Path(folder))
            print(json.dumps(row), flush=True)
            if args.json is not None:
                with args.json.open("a") as out:
                    out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
