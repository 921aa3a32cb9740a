"""Regenerate the golden raw artifacts the parser tests read.

    python tests/assets/make_goldens.py

Runs each model under tests/assets/models/ through xlacli's capture child on
XLA:CPU and copies torch_xla's raw artifacts into tests/assets/golden/<model>/.
Review the diff before committing: the parser tests assert on these files.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from xlacli.capture.runner import run_child
from xlacli.parse.xla_dump import classify_dump_file
from xlacli.run_folder.request import CaptureRequest, RunPaths

HERE = Path(__file__).resolve().parent
MODELS = {"shape_change": 4, "host_sync": 2}


def capture(name: str, steps: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        paths = RunPaths(Path(tmp))
        paths.raw.mkdir()
        request = CaptureRequest(str(HERE / "models" / f"{name}.py"), None, steps)
        outcome = run_child(request, paths)
        if outcome.returncode != 0:
            sys.exit(f"{name}: the capture failed ({outcome.returncode}); see {paths.child_log}")
        target = HERE / "golden" / name
        shutil.rmtree(target, ignore_errors=True)
        (target / "xla-dump").mkdir(parents=True)
        shutil.copy(paths.ir_dump_files()[0], target / "ir-dump.txt")
        shutil.copy(paths.debug_log, target / "pt-xla-debug.txt")
        shutil.copy(paths.metrics, target / "metrics.txt")
        shutil.copy(paths.events, target / "events.jsonl")
        for dumped in sorted(paths.xla_dump.iterdir()):
            classified = classify_dump_file(dumped.name)
            if classified and classified[2] in ("hlo_before", "hlo_after", "buffer_assignment"):
                shutil.copy(dumped, target / "xla-dump" / dumped.name)
        print(f"{name}: {target.relative_to(HERE.parent.parent)}")


if __name__ == "__main__":
    for model, steps in MODELS.items():
        capture(model, steps)
