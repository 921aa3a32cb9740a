"""What the memory and precision report costs: parsing at report time, a hook while tracing.

    python benchmarks/memory/run.py [--run RUN_FOLDER] [--steps 40]

1. Report time: the memory, precision and checkpoint facts of every graph of a
   run folder (``with_memory_facts``), against the rest of turning the folder's
   files into sizes (``graph_sizes``: the buffer assignment and both HLO files
   parsed). The HLO is parsed once for both (one ``HloCache``), as in
   ``collect.py``; the facts are timed with that cache warm.
2. Step time: the child's autocast probe, a global forward pre-hook, watched
   during the first two steps only. Timed here on every step, its worst case:
   examples/transformer.py's forward plus ``torch_xla.sync()``, with and
   without the hook, alternating, medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def report_time(run: Path, repeats: int) -> tuple[float, float]:
    from xlacli.analysis.memory.facts import with_memory_facts
    from xlacli.assemble.graph_files import HloCache, graph_sizes
    from xlacli.report.run_report import load_report

    report = load_report(run)
    sizes, facts = [], []
    for _ in range(repeats):
        hlo = HloCache(run)
        started = time.perf_counter()
        for graph in report.graphs:
            graph_sizes(run, dict(graph.files), hlo)
        sizes.append(time.perf_counter() - started)
        started = time.perf_counter()
        with_memory_facts(report.graphs, run, hlo, [], [])
        facts.append(time.perf_counter() - started)
    return statistics.median(sizes), statistics.median(facts)


def step_times(steps: int) -> tuple[float, float]:
    import torch
    import torch_xla

    sys.path.insert(0, str(REPO / "examples"))
    import transformer

    from xlacli.child.memory_probe import StepProbe

    device = torch_xla.device()
    model = transformer.get_model().to(device).eval()
    batch = transformer.get_inputs(0).to(device)

    def one_step() -> float:
        started = time.perf_counter()
        with torch.no_grad():
            model(batch)
        torch_xla.sync()
        return time.perf_counter() - started

    for _ in range(3):
        one_step()  # compile
    plain, hooked = [], []
    for _ in range(steps):
        plain.append(one_step())
        probe = StepProbe(device)
        hooked.append(one_step())
        probe.close()
    return statistics.median(plain), statistics.median(hooked)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--run", type=Path, help="a run folder (default: compile examples/memory/block.py)"
    )
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run
        if run is None:
            run = Path(tmp) / "run"
            model = REPO / "examples" / "memory" / "block.py"
            command = [sys.executable, "-m", "xlacli", "compile", str(model), "--steps", "1"]
            subprocess.run(
                [*command, "--out", str(run), "--format", "json"],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        compile_s = json.loads((run / "report.json").read_text())["total_compile_time_s"]
        sizes_s, facts_s = report_time(run, args.repeats)
        print(f"run folder {run}: XLA compile {compile_s:.2f} s")
        print(f"graph sizes (parses the files): {sizes_s * 1e3:.1f} ms")
        print(f"memory, precision, checkpoint facts (HLO cache warm): {facts_s * 1e3:.1f} ms")
    plain_s, hooked_s = step_times(args.steps)
    print(
        f"transformer forward + sync: {plain_s * 1e3:.2f} ms plain, "
        f"{hooked_s * 1e3:.2f} ms with the autocast probe ({hooked_s / plain_s:.3f}x)"
    )


if __name__ == "__main__":
    main()
