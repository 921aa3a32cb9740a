"""A CI gate of your own on xlacli's Python API, as xlacli's own commands are built.

    python examples/api/compile_gate.py [MODEL.py] [--max-compiles N]

``xlacli compile MODEL --fail-on-recompile`` in a dozen lines: run the model (in
a child process, as the command does), print each steady-state recompile with
its line and fix, and exit with the command's code: 0 within budget, 1 over it,
2 a bad model file, 3 the model failed (after printing what it did run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xlacli import XlacliError, api

DEFAULT_MODEL = Path(__file__).resolve().parents[1] / "recompile" / "input_shape.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("model", nargs="?", default=str(DEFAULT_MODEL))
    parser.add_argument("--max-compiles", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        run = api.compile_run(args.model, steps=5)
        report = run.report
        print(f"{report.compilations} compilations over {report.steps} steps: {run.run_dir}")
        for event in report.events:
            if event.steady_state:
                print(f"step {event.step}: {event.cause.category} at {event.cause.location}")
                print(f"  fix: {event.cause.hint}")
        run.raise_error()  # the model's own failure, after what it did run
        api.check_budgets(report, max_compiles=args.max_compiles, fail_on_recompile=True)
    except XlacliError as error:
        print(f"gate: {error.message}", file=sys.stderr)
        return error.exit_code
    print("gate: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
