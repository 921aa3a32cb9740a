"""Script mode on the example training scripts, end to end on XLA:CPU: the
counts equal torch_xla's own (the same script run bare), steps stop at
--steps, and the known recompiles are explained at the user's line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ASSETS, EXAMPLES, REPO, run_cli
from tests.recorded_cli import run_bare
from tests.report_json import step_records

pytestmark = pytest.mark.e2e
SCRIPTS = EXAMPLES / "scripts"
BARE = ASSETS / "scripts" / "bare_counters.py"

# script -> its arguments (tiny runs; train_compiled's and train_causal_lm's are their
# documented runs, shared with the golden reports)
CASES = {
    "train_cnn.py": ("--batch-size", "8"),
    "train_compiled.py": ("--batch-size", "6"),
    "train_causal_lm.py": ("--steps", "6"),
}


def line_of(script: str, fragment: str) -> str:
    path = SCRIPTS / script
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fragment in line:
            return f"{path}:{number}"
    raise AssertionError(f"{fragment!r} not in {path}")


def compile_script(capture_once, script: str, *options: str) -> dict:
    shown = (SCRIPTS / script).relative_to(REPO).as_posix()
    captured = capture_once("compile", shown, *options, "--", *CASES[script])
    assert captured.result.code == 0, captured.result.stderr
    assert "running it as a script" in captured.result.stderr
    return captured.report


def bare_counters(out: Path, script: str) -> dict[str, int]:
    done = run_bare([BARE, out, SCRIPTS / script, *CASES[script]], output=out)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module", params=sorted(CASES))
def script_run(request, capture_once, tmp_path_factory) -> tuple[str, dict, dict[str, int]]:
    script = request.param
    if script == "train_causal_lm.py":
        pytest.importorskip("transformers")
    folder = tmp_path_factory.mktemp(script.removesuffix(".py"))
    report = compile_script(capture_once, script)
    return script, report, bare_counters(folder / "bare.json", script)


def test_counts_equal_torch_xla_running_the_script_bare(script_run):
    _, report, bare = script_run
    assert report["compilations"] == len(report["events"]) == bare["UncachedCompile"] > 0
    assert report["executions"] == bare["ExecuteComputation"] > 0
    assert report["counters"]["UncachedCompile"] == bare["UncachedCompile"]
    assert report["steps"] == report["steps_requested"] > 0
    assert sum(s["compilations"] for s in step_records(report)) <= report["compilations"]


def test_the_short_last_batch_is_an_input_shape_recompile_at_the_loop(script_run):
    script, report, _ = script_run
    if script == "train_causal_lm.py":
        pytest.skip("its batches all have the same shape")
    fragment = {
        "train_cnn.py": "in enumerate(device_loader)",
        "train_compiled.py": "x = features[start",
    }
    last = report["events"][-1]
    assert last["step"] == report["steps"] - 1
    assert last["steady_state"]
    assert last["cause"]["category"] == "input_shape", last
    assert last["cause"]["location"] == line_of(script, fragment[script]), last
    assert "->" in last["cause"]["detail"]


def test_the_logging_value_read_is_a_host_sync_at_its_line(script_run):
    script, report, _ = script_run
    if script != "train_cnn.py":
        pytest.skip("only the CNN reads the loss inside the step's graph")
    host_syncs = [e for e in report["events"] if e["cause"]["category"] == "host_sync"]
    assert [e["cause"]["location"] for e in host_syncs] == [line_of(script, "loss.item()")]
    assert host_syncs[0]["step"] == 0


def test_steps_stop_the_script_after_n_steps(capture_once):
    report = compile_script(capture_once, "train_compiled.py", "--steps", "3", "--warmup", "2")
    assert report["steps"] == report["steps_requested"] == 3
    assert [s["step"] for s in step_records(report)] == [0, 1, 2]
    assert report["error"] is None
    assert not [e for e in report["events"] if e["steady_state"]]  # the short batch never ran


def test_memory_and_warnings_at_the_scripts_lines_inside_the_libraries(script_run, tmp_path):
    """A Hugging Face model trained by torch.optim: every memory line and warning at the
    script's own line, the library's beside it, in text, JSON and HTML (issue 27)."""
    script, report, _ = script_run
    if script != "train_causal_lm.py":
        pytest.skip("the transformers script")
    assert report["trained"] is True and report["train"] is False  # the script's own loop
    buffers = [b for g in report["graphs"] if g["memory"] for b in g["memory"]["biggest"]]
    located = [b for b in buffers if b["op"]]
    assert located and all(b["source"].startswith(str(SCRIPTS / script)) for b in located)
    assert any("/torch/optim/" in (b["library_source"] or "") for b in located), located
    optimizer_step = line_of(script, "        xm.optimizer_step(").rsplit(":", 1)[1]
    text = run_cli("report", report["run_dir"], cwd=REPO).stdout
    shown = f"{script}:{optimizer_step} (inside torch/optim/adam.py:"
    assert "f64 instructions at examples/scripts/" + shown in text, text
    assert "inside torch/optim/adam.py" not in text.replace(shown, ""), text
    page = tmp_path / "run.html"
    assert run_cli("report", report["run_dir"], "--output", page, cwd=REPO).code == 0
    cells = re.findall(r'<td class="loc">(.*?)</td>', page.read_text())
    assert any(cell.startswith(f"examples/scripts/{script}:") for cell in cells), cells
    assert not [cell for cell in cells if cell.startswith(("torch/", "transformers/"))], cells
    assert "(inside torch/optim/adam.py:" in page.read_text()
