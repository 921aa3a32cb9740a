"""Script mode: wall time of ``xlacli compile SCRIPT -- ARGS`` against
``python SCRIPT ARGS``, side by side.

    python benchmarks/compile/script_mode.py [--repeats 5]

The same unmodified training script (examples/scripts/train_cnn.py) runs to
its end both ways on XLA:CPU, alternating, each a fresh process (imports
included, as a user sees them). Prints the medians and their ratio (goal: at
most 1.10).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import alternate  # the compile benchmark's pairing

SCRIPT = "examples/scripts/train_cnn.py"
SCRIPT_ARGS = ["--batch-size", "8"]


def bench(repeats: int) -> tuple[float, float]:
    return alternate(
        [sys.executable, SCRIPT, *SCRIPT_ARGS],
        lambda out: [
            sys.executable,
            "-m",
            "xlacli",
            "compile",
            SCRIPT,
            "--out",
            str(out),
            "--format",
            "json",
            "--",
            *SCRIPT_ARGS,
        ],
        repeats,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    bare, tool = bench(args.repeats)
    print("| script | python SCRIPT (s) | xlacli compile SCRIPT (s) | ratio |")
    print("|---|---|---|---|")
    print(f"| {SCRIPT} {' '.join(SCRIPT_ARGS)} | {bare:.2f} | {tool:.2f} | {tool / bare:.3f} |")


if __name__ == "__main__":
    main()
