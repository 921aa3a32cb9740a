"""Regenerate the memory goldens: one real capture per tiny model.

    python tests/assets/golden/memory/make_goldens.py

Compiles each model of tests/assets/models/memory/ for one step on XLA:CPU
with xlacli and copies its graph's buffer assignment, memory-usage report and
HLO (before and after XLA's optimizations) here, under the model's name.
Review the diff before committing: the memory and precision tests assert on them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODELS = HERE.parents[1] / "models" / "memory"
VARIANTS = ("tiny", "tiny_checkpoint", "tiny_autocast", "tiny_autocast_cpu")
KEPT = ("buffer-assignment.txt", "memory-usage.txt", "hlo.before.txt", "hlo.after.txt")
# The wrong-device autocast needs only the program torch_xla emitted: its matmuls' types.
KEPT_BY_VARIANT = {"tiny_autocast_cpu": ("hlo.before.txt",)}


def capture(name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        command = [sys.executable, "-m", "xlacli", "compile", str(MODELS / f"{name}.py")]
        subprocess.run([*command, "--steps", "1", "--out", str(run)], check=True)
        report = json.loads((run / "report.json").read_text())
        graph = max(report["graphs"], key=lambda g: g["optimized_hlo_instructions"] or 0)
        target = HERE / name
        shutil.rmtree(target, ignore_errors=True)
        target.mkdir()
        for file_name in KEPT_BY_VARIANT.get(name, KEPT):
            shutil.copy(run / "graphs" / graph["hash"] / file_name, target / file_name)
        events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
        step = next(event for event in events if event.get("event") == "step")
        facts = {key: step[key] for key in ("autocast", "memory_info") if key in step}
        (target / "step-facts.json").write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n")
        print(f"{name}: {target.relative_to(HERE.parents[2])}")


if __name__ == "__main__":
    for variant in sys.argv[1:] or VARIANTS:
        capture(variant)
