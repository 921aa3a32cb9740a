"""xlacli from Python: compile a model, list its steady-state recompiles, diff two graphs.

    python examples/api/explain_recompiles.py

The same calls work in a notebook cell. The model runs in a child process, as under
``xlacli compile``; this process never imports torch.
"""

from __future__ import annotations

from pathlib import Path

import xlacli

MODEL = Path(__file__).resolve().parents[1] / "recompile" / "input_shape.py"


def main() -> None:
    report = xlacli.compile(MODEL, steps=5, warmup=2)
    print(f"{report.compilations} compilations over {report.steps} steps in {report.run_dir}")
    for event in report.events:
        if event.steady_state:
            print(f"step {event.step}: {event.cause.category} at {event.cause.location}")
            print(f"  {event.cause.detail}")
            print(f"  fix: {event.cause.hint}")
    first, second = (graph.files["hlo_before"] for graph in report.graphs[:2])
    diff = xlacli.diff_hlo(Path(report.run_dir, first), Path(report.run_dir, second))
    print(f"graphs 1 and 2 identical: {diff.identical}")
    assert xlacli.load_report(report.run_dir) == report  # what xlacli report reads


if __name__ == "__main__":
    main()
