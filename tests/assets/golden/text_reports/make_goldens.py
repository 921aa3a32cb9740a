"""Regenerate the golden text reports of the examples (80 and 120 columns).

    python tests/assets/golden/text_reports/make_goldens.py          # run the examples again
    python tests/assets/golden/text_reports/make_goldens.py --render  # re-render the saved reports
    python tests/assets/golden/text_reports/make_goldens.py mlp conv  # only these examples

Each example runs through ``xlacli compile`` on XLA:CPU; its report.json is kept
here with the checkout's path written as @REPO@ (so the goldens do not depend on
where the checkout lives), and rendered at each width into NAME.WIDTH.txt.
``--render`` only re-renders (after a change to the text renderer). Review the
diff before committing: tests/integration/test_report_goldens.py compares the
text against these files, and checks each against its own JSON.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
WIDTHS = (80, 120)
REPO_TOKEN = "@REPO@"
# name: the compile command's arguments after the model file.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "mlp": ("examples/mlp.py",),
    "conv": ("examples/conv.py", "--steps", "5"),
    "dynamic_shapes": ("examples/dynamic_shapes.py", "--steps", "4"),
    "transformer_adamw": ("examples/transformer.py", "--train", "--optimizer", "adamw"),
    "input_shape": ("examples/recompile/input_shape.py", "--steps", "4"),
    "spmd_block": ("examples/spmd/transformer_block.py", "--devices", "4"),
    "graph_break": ("examples/dynamo/graph_break.py", "--mode", "dynamo", "--steps", "3"),
}


def render(report_json: str, width: int) -> str:
    """A saved report's text at ``width`` columns, as the terminal shows it from
    the checkout's root (no colours)."""
    from rich.console import Console

    from xlacli.render.compile_report import CompileReportView
    from xlacli.render.view import show
    from xlacli.report.run_report import report_from_dict

    report = report_from_dict(json.loads(report_json.replace(REPO_TOKEN, str(REPO))))
    out = io.StringIO()
    console = Console(file=out, width=width, color_system=None, highlight=False)
    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        show(CompileReportView(report), "text", console)
    finally:
        os.chdir(cwd)
    return out.getvalue()


def capture(name: str, args: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        completed = subprocess.run(
            [sys.executable, "-m", "xlacli", "compile", *args, "--out", str(run)],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={**os.environ, "PJRT_DEVICE": "CPU"},
        )
        if completed.returncode not in (0, 1):
            sys.exit(f"{name}: exit {completed.returncode}\n{completed.stderr}")
        text = (
            (run / "report.json").read_text().replace(str(run), f"{REPO_TOKEN}/.xlacli/runs/{name}")
        )
        (HERE / f"{name}.json").write_text(text.replace(str(REPO), REPO_TOKEN))


def write_text(name: str) -> None:
    if not (HERE / f"{name}.json").exists():
        return  # not captured yet: run without --render
    saved = (HERE / f"{name}.json").read_text()
    for width in WIDTHS:
        (HERE / f"{name}.{width}.txt").write_text(render(saved, width))
    print(f"{name}: {', '.join(f'{name}.{w}.txt' for w in WIDTHS)}")


if __name__ == "__main__":
    only_render = "--render" in sys.argv
    chosen = [name for name in sys.argv[1:] if not name.startswith("-")] or list(EXAMPLES)
    for example, arguments in EXAMPLES.items():
        if example not in chosen:
            continue
        if not only_render:
            capture(example, arguments)
        write_text(example)
