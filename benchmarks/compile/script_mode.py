"""Script mode: wall time of ``xlacli compile SCRIPT -- ARGS`` against
``python SCRIPT ARGS``, side by side.

    python benchmarks/compile/script_mode.py [--repeats 5] [--script cnn|dynamo|eager]

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
# Other scripts worth timing: a torch.compile loop (the openxla bridge's syncs
# go through the hook) and eager mode with torch_xla.compile.
SCRIPTS = {
    "cnn": (SCRIPT, SCRIPT_ARGS),
    "dynamo": ("examples/scripts/compiled/train_dynamo.py", ["--steps", "8"]),
    "eager": ("examples/scripts/compiled/train_eager.py", ["--steps", "8"]),
}


def bench(
    repeats: int, script: str = SCRIPT, script_args: list[str] = SCRIPT_ARGS
) -> tuple[float, float]:
    return alternate(
        [sys.executable, script, *script_args],
        lambda out: [
            sys.executable,
            "-m",
            "xlacli",
            "compile",
            script,
            "--out",
            str(out),
            "--format",
            "json",
            "--",
            *script_args,
        ],
        repeats,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--script", choices=sorted(SCRIPTS), default="cnn")
    args = parser.parse_args()
    script, script_args = SCRIPTS[args.script]
    bare, tool = bench(args.repeats, script, script_args)
    print("| script | python SCRIPT (s) | xlacli compile SCRIPT (s) | ratio |")
    print("|---|---|---|---|")
    print(f"| {script} {' '.join(script_args)} | {bare:.2f} | {tool:.2f} | {tool / bare:.3f} |")


if __name__ == "__main__":
    main()
