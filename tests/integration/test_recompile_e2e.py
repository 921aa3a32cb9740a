"""Every recompile category, on XLA:CPU, from the examples in examples/recompile/:
the category, the user's line, and torch_xla's own compile counter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO, Capture, run_cli
from tests.report_json import executions_per_step
from xlacli.parse.metrics_report import parse_metrics_report

pytestmark = pytest.mark.e2e
RECOMPILE = EXAMPLES / "recompile"

# example -> (category of the steady-state recompile, a fragment of its line, its step)
CASES = {
    "input_shape": ("input_shape", "return torch.randint(0, 100, (4, length)", 3),
    "input_dtype": ("input_dtype", "return x.half() if step >= 3 else x", 3),
    "intermediate_shape": ("intermediate_shape", "window = batch[:, :context]", 3),
    "graph_structure": ("graph_structure", "out = torch.tanh(out) + out.abs()", 3),
    "constant_value": ("constant_value", "aux_weight * out.abs().mean()", 3),
    "data_dependent_shape": ("data_dependent_shape", "positive = hidden[hidden > 0]", 2),
    "host_sync": ("host_sync", "if step >= 3 and loss > 1.0", 3),
}


def line_of(example: str, fragment: str, *, relative: bool = False) -> str:
    """``/abs/examples/recompile/x.py:N`` (as the JSON has it; ``relative``: as the
    terminal shows it from the repository) of the line holding ``fragment``."""
    path = RECOMPILE / f"{example}.py"
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if fragment in line:
            return f"{path.relative_to(REPO) if relative else path}:{number}"
    raise AssertionError(f"{fragment!r} not in {path}")


def compile_json(tmp_path: Path, example: str, *args: str) -> dict:
    result = run_cli(
        "compile",
        f"examples/recompile/{example}.py",
        "--steps",
        "5",
        "--out",
        tmp_path / "run",
        "--format",
        "json",
        *args,
        cwd=REPO,
    )
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def documented_run(capture_once, example: str, steps: int = 5) -> Capture:
    """The example's documented ``compile --steps N`` run, shared with every test
    (and the golden reports) that runs the same command."""
    captured = capture_once("compile", f"examples/recompile/{example}.py", "--steps", str(steps))
    assert captured.result.code == 0, captured.result.stderr
    return captured


def torch_xla_compiles(report: dict) -> int:
    metrics = parse_metrics_report((Path(report["run_dir"]) / "metrics.txt").read_text())
    return metrics.counter("UncachedCompile")


@pytest.mark.parametrize("example", sorted(CASES))
def test_category_line_and_counter(capture_once, example):
    category, fragment, step = CASES[example]
    report = documented_run(capture_once, example).report
    assert len(report["events"]) == report["compilations"] == torch_xla_compiles(report)
    steady = [e for e in report["events"] if e["steady_state"]]
    assert report["steady_state_compiles"] == len(steady) >= 1
    first = steady[0]
    assert first["step"] == step
    assert first["cause"]["category"] == category, first
    assert first["cause"]["location"] == line_of(example, fragment), first
    assert first["cause"]["detail"]
    assert first["cause"]["hint"]
    assert first["compile_time_s"] > 0
    assert report["events"][0]["cause"]["category"] in ("first_compile", "host_sync")


def test_details_say_before_and_after(capture_once):
    report = documented_run(capture_once, "input_shape").report
    (event,) = [e for e in report["events"] if e["steady_state"]]
    assert event["cause"]["detail"] == "input 0 shape s64[4,16] -> s64[4,24]"
    assert event["compared_with"] == report["events"][0]["graph_hash"]


def test_stable_model_has_no_false_alarm(tmp_path):
    report = compile_json(tmp_path, "stable", "--fail-on-recompile")
    assert report["steady_state_compiles"] == 0
    assert [e["cause"]["category"] for e in report["events"]] == ["first_compile"]
    assert executions_per_step(report) == [1, 1, 1, 1, 1]
    assert report["fallback_ops"] == []
    assert torch_xla_compiles(report) == 1


def test_host_sync_counts_graphs_per_step_and_fallbacks(capture_once):
    report = documented_run(capture_once, "host_sync").report
    assert executions_per_step(report) == [1, 1, 1, 2, 2]
    assert report["fallback_ops"] == [
        {
            "op": "aten::_local_scalar_dense",
            "count": 2,
            "location": line_of("host_sync", "if step >= 3 and loss > 1.0"),
            "library_location": None,
        }
    ]


def test_fail_on_recompile_and_max_compiles(tmp_path):
    result = run_cli(
        "compile",
        "examples/recompile/graph_structure.py",
        "--steps",
        "5",
        "--out",
        tmp_path / "a",
        "--fail-on-recompile",
        cwd=REPO,
    )
    assert result.code == 1
    assert "1 steady-state recompile: step 3 graph_structure at" in result.stderr
    assert "Steady-state recompiles (1)" in result.stdout  # the report is still printed
    result = run_cli(
        "compile",
        "examples/recompile/graph_structure.py",
        "--steps",
        "5",
        "--out",
        tmp_path / "b",
        "--max-compiles",
        "1",
        cwd=REPO,
    )
    assert result.code == 1 and "2 compilations, over the budget of 1" in result.stderr
    result = run_cli(
        "compile",
        "examples/recompile/graph_structure.py",
        "--steps",
        "5",
        "--out",
        tmp_path / "c",
        "--warmup",
        "4",
        "--fail-on-recompile",
        cwd=REPO,
    )
    assert result.code == 0, result.stderr  # step 3 is inside a 4-step warm-up


def test_terminal_blocks(capture_once):
    out = documented_run(capture_once, "constant_value").result.stdout
    assert "Steps: ●·│·●·" in out
    assert "Steady-state recompiles (1):" in out
    assert "constant_value" in out
    assert line_of("constant_value", "aux_weight * out", relative=True) in out
    assert "│ return out.pow(2).mean() + aux_weight * out.abs().mean()" in out
    assert "constant f32[] 0 -> 1" in out
    assert "fix: a Python scalar is baked into the graph" in out
    assert "Next: xlacli diff-hlo" in out


def test_real_user_code(tmp_path):
    """Argument parsing at import, a dataclass output, a sync inside step(), and a
    Python scalar leaving 1.0 (a constant in the graph) for 0.5 (an input)."""
    from tests.conftest import MODELS

    model = MODELS / "user_code.py"
    result = run_cli(
        "compile", model, "--steps", "5", "--out", tmp_path / "run", "--format", "json", cwd=REPO
    )
    assert result.code == 0, result.stderr
    report = json.loads(result.stdout)
    assert executions_per_step(report) == [2, 2, 2, 2, 2]  # the step's own sync cuts it
    steady = [e for e in report["events"] if e["steady_state"]]
    assert [e["cause"]["category"] for e in steady] == ["constant_value"]
    lines = model.read_text().splitlines()
    line = next(i for i, text in enumerate(lines, start=1) if "return logits * scale" in text)
    assert steady[0]["cause"]["location"] == f"{model}:{line}"
    assert "torch_xla bakes in as a constant" in steady[0]["cause"]["detail"]
    result = run_cli(
        "compile", model, "--train", "--steps", "2", "--out", tmp_path / "train", cwd=REPO
    )
    assert result.code == 0, result.stderr  # the user's step() trains; --train is moot


def test_dict_inputs_are_named(tmp_path):
    model = tmp_path / "dict_inputs.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.e = torch.nn.Embedding(10, 4)\n"
        "    def forward(self, input_ids, attention_mask):\n"
        "        return self.e(input_ids) * attention_mask.unsqueeze(-1)\n"
        "def get_model():\n    return M()\n"
        "def get_inputs(step):\n"
        "    n = 8 if step < 3 else 12\n"
        "    return {'input_ids': torch.zeros(2, n, dtype=torch.long),"
        " 'attention_mask': torch.ones(2, n)}\n"
    )
    result = run_cli(
        "compile", model, "--steps", "4", "--out", tmp_path / "run", "--format", "json"
    )
    assert result.code == 0, result.stderr
    (event,) = [e for e in json.loads(result.stdout)["events"] if e["steady_state"]]
    assert event["cause"]["detail"] == (
        "input 'input_ids' shape s64[2,8] -> s64[2,12]; "
        "input 'attention_mask' shape f32[2,8] -> f32[2,12]"
    )
