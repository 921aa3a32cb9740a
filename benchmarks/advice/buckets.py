"""Does the bucket advice pay what it predicts? Apply it and measure.

    nice -n 19 python benchmarks/advice/buckets.py [--steps 12]

``xlacli compile examples/advice/variable_lengths.py`` on the raw stream gives
the bucket advice: edges, the compiles and the padding waste predicted. The same
stream is then run padded to the advised edges (``BUCKET_EDGES``), and its
compiles (torch_xla's count) and padding waste (from the padded run's input
shapes against the raw lengths) are measured. On the run the sizes came from,
prediction and measurement must be equal; more than 2x apart fails (exit 1).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "advice" / "variable_lengths.py"


def compile_run(steps: int, out: Path, edges: tuple[int, ...] = ()) -> dict:
    env = {**os.environ, "PYTHONPATH": str(REPO), "BUCKET_EDGES": ",".join(map(str, edges))}
    result = subprocess.run(
        [sys.executable, "-m", "xlacli", "compile", str(EXAMPLE), "--steps", str(steps),
         "--format", "json", "--out", str(out), "--force"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return json.loads(result.stdout)


def lengths(report: dict) -> list[int]:
    """The token count of each step's batch, from its input signature."""
    return [
        int(re.search(r"\[\d+,(\d+)\]", step["input_signature"][0])[1])  # type: ignore[index]
        for step in report["step_records"]
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        raw = compile_run(args.steps, Path(tmp) / "raw")
        (advice,) = raw["bucket_advice"]
        option = advice["options"][advice["chosen"]]
        edges = tuple(option["edges"])
        padded = compile_run(args.steps, Path(tmp) / "padded", edges)
    raw_lengths, padded_lengths = lengths(raw), lengths(padded)
    waste = (sum(padded_lengths) - sum(raw_lengths)) / sum(padded_lengths)
    rows = [
        ("compiles", raw["compilations"], option["compiles"], padded["compilations"]),
        ("padding waste", 0.0, option["padding_waste"], waste),
        ("compile time (s)", raw["total_compile_time_s"], None, padded["total_compile_time_s"]),
    ]
    print(f"edges {edges} from {advice['steps']} steps; sizes {advice['sizes']}")
    print("| | raw | predicted | measured (padded) | predicted / measured |")
    print("|---|---|---|---|---|")
    failed = False
    for name, before, guess, measured in rows:
        ratio = "" if guess is None else _ratio(guess, measured)
        failed |= ratio.endswith("FAIL")
        print(f"| {name} | {_show(before)} | {_show(guess)} | {_show(measured)} | {ratio} |")
    return 1 if failed else 0


def _ratio(guess: float, measured: float) -> str:
    if guess == measured:
        return "1.00"
    ratio = guess / measured if measured else float("inf")
    return f"{ratio:.2f}" + ("" if 0.5 <= ratio <= 2 else " FAIL")


def _show(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if isinstance(value, float) and value < 1 else f"{value:.3g}"


if __name__ == "__main__":
    sys.exit(main())
