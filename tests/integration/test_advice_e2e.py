"""The advisors on the examples in examples/advice/: each fires where it should,
stays silent on models it does not apply to, and shows in text, JSON and HTML;
``check`` records compile cost by line and ``diff-hlo RUN RUN`` shows lines that grew."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO, CliResult, run_cli

pytestmark = pytest.mark.e2e
ADVICE = EXAMPLES / "advice"


def compile_run(out: Path, example: str, steps: int, env: dict[str, str] | None = None) -> dict:
    result = run_cli(
        "compile", example, "--steps", str(steps), "--out", out, "--format", "json",
        cwd=REPO, env=env,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def line_of(path: Path, fragment: str) -> str:
    lines = path.read_text().splitlines()
    return f"{path}:{next(i for i, line in enumerate(lines, 1) if fragment in line)}"


def text_report(run: Path) -> CliResult:
    result = run_cli("report", run, cwd=REPO)
    assert result.code == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """One capture per example, shared by every assertion."""
    root = tmp_path_factory.mktemp("advice")
    return {
        # deep enough for scan_layers to pay (from about 35 layers on XLA:CPU)
        "decoder": compile_run(root / "decoder", "examples/advice/decoder_stack.py", 1,
                               {"DECODER_DEPTH": "48"}),
        "shallow": compile_run(root / "shallow", "examples/advice/decoder_stack.py", 1,
                               {"DECODER_DEPTH": "2"}),
        "lengths": compile_run(root / "lengths", "examples/advice/variable_lengths.py", 12),
        "logging": compile_run(root / "logging", "examples/advice/logging_loop.py", 3),
        "mlp": compile_run(root / "mlp", "examples/mlp.py", 2),
    }  # fmt: skip


def test_scan_advice_names_the_module_list_and_predicts_a_saving(runs: dict) -> None:
    (advice,) = runs["decoder"]["scan_advice"]
    assert advice["call_site"] == line_of(ADVICE / "decoder_stack.py", "hidden = layer(hidden)")
    assert advice["module_list"] == "self.layers"
    assert advice["layer_class"] == "DecoderBlock"
    assert advice["layers"] == 48
    assert advice["identical"]
    assert advice["share"] > 0.5
    assert advice["pays"]
    assert 0 < advice["predicted_saving_time_s"] < advice["graph_compile_time_s"]
    # the model's parts, from this run's own compile
    plain = advice["first_layer_compile_time_s"] + 47 * advice["per_layer_compile_time_s"]
    assert plain == pytest.approx(advice["graph_compile_time_s"])
    saving = 0.75 * 47 * advice["per_layer_compile_time_s"] - advice["loop_compile_time_s"]
    assert saving == pytest.approx(advice["predicted_saving_time_s"])
    assert advice["break_even_layers"] < 48
    assert "scan_layers(self.layers, hidden)" in advice["code"]
    # advised: no reason not to, and no optimizer in a forward
    assert advice["not_advised_because"] == []
    assert advice["optimizer_instructions"] == 0


def test_scan_advice_says_a_shallow_stack_would_not_pay(runs: dict) -> None:
    (advice,) = runs["shallow"]["scan_advice"]
    assert advice["layers"] == 2 and advice["identical"]
    assert not advice["pays"]
    assert advice["predicted_saving_time_s"] < 0
    assert advice["break_even_layers"] > 2
    assert advice["code"] == ""
    # why, and from how many layers the same stack would be advised
    assert advice["not_advised_because"] == ["loop"]
    assert advice["advised_from_layers"] >= advice["break_even_layers"] > 2
    text = text_report(Path(runs["shallow"]["run_dir"])).stdout
    assert "scan_layers would not pay here" in text
    assert "outweighs the 1 further layer it removes" in text
    assert f"it would pay from about {advice['advised_from_layers']} layers" in text
    assert "scan_layers(self.layers, hidden)" not in text


def test_compile_cost_by_line_points_at_the_layer_lines(runs: dict) -> None:
    cost = runs["decoder"]["compile_cost"]
    graph = runs["decoder"]["graphs"][0]
    assert cost["hlo_instructions"] == graph["hlo_instructions"]
    top = cost["lines"][0]["location"]
    assert top is not None and top.startswith(str(ADVICE / "decoder_stack.py"))
    assert sum(line["compile_time_s"] for line in cost["lines"]) == pytest.approx(
        graph["compile_time_s"]
    )


def test_bucket_advice_on_a_variable_length_stream(runs: dict) -> None:
    (advice,) = runs["lengths"]["bucket_advice"]
    assert advice["category"] == "input_shape"
    assert advice["location"] == line_of(ADVICE / "variable_lengths.py", "torch.randint(1, VOCAB")
    assert advice["dimension"] == "input 0, dim 1"
    assert advice["steps"] == 12
    assert advice["compiles_seen"] == 8 == runs["lengths"]["compilations"]
    sizes = dict(advice["sizes"])
    assert sizes == {5: 2, 6: 1, 7: 2, 9: 1, 11: 1, 12: 1, 14: 1, 16: 3}
    chosen = advice["options"][advice["chosen"]]
    assert chosen["edges"] == [7, 16]
    assert "EDGES = (7, 16)" in advice["code"]


def test_value_read_is_ranked_with_its_fix(runs: dict) -> None:
    (cost,) = runs["logging"]["value_read_costs"]
    assert cost["location"] == line_of(ADVICE / "logging_loop.py", "LOSSES.append(loss.item())")
    assert cost["kind"] == "item"
    assert cost["executions_per_step"] == 1.0
    # priced by the host's measured time inside the read (the first read compiled: untimed)
    assert cost["read_time_s"] > 0 and cost["read_cpu_time_s"] > 0
    assert cost["extra_time_s"] == pytest.approx(cost["read_time_s"])
    assert "add_step_closure" in cost["fix"]


@pytest.mark.parametrize(
    ("run", "silent"),
    [
        ("mlp", ("scan_advice", "bucket_advice", "value_read_costs")),
        ("lengths", ("scan_advice", "value_read_costs")),
        ("logging", ("scan_advice", "bucket_advice")),
        ("decoder", ("bucket_advice", "value_read_costs")),
    ],
)
def test_advisors_stay_silent_where_they_do_not_apply(runs: dict, run: str, silent: tuple) -> None:
    for section in silent:
        assert runs[run][section] == [], section
    assert runs[run]["compile_cost"]["lines"]


def test_all_advice_in_text_and_html(runs: dict) -> None:
    text = "".join(text_report(Path(runs[name]["run_dir"])).stdout for name in runs)
    for fragment in ("Where your graphs come from", "Scan advice", "Bucket advice", "Value reads"):
        assert fragment in text
    html = ""
    for name in ("decoder", "lengths", "logging"):
        result = run_cli("report", runs[name]["run_dir"], "--format", "html", cwd=REPO)
        assert result.code == 0, result.stderr
        html += Path(result.stdout.strip()).read_text()
    for fragment in ('id="advice"', "Where your graphs come from", "Scan:", "Buckets:",
                     "Value reads, by cost per step"):  # fmt: skip
        assert fragment in html


def test_diff_hlo_of_two_runs_shows_the_lines_that_grew(runs: dict) -> None:
    result = run_cli(
        "diff-hlo", runs["shallow"]["run_dir"], runs["decoder"]["run_dir"], "--format", "json",
        cwd=REPO,
    )  # fmt: skip
    assert result.code == 1, result.stderr
    lines = json.loads(result.stdout)["lines"]
    assert lines[0]["after"] == 24 * lines[0]["before"]  # 2 -> 48 layers
    assert lines[0]["location"].startswith(str(ADVICE / "decoder_stack.py"))


def test_check_records_compile_cost_by_line(tmp_path: Path) -> None:
    shutil.copy(ADVICE / "variable_lengths.py", tmp_path / "model.py")
    result = run_cli(
        "check", "model.py", "--baseline", "baseline.json", "--update-baseline", "--steps", "2",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    lines = json.loads((tmp_path / "baseline.json").read_text())["lines"]
    assert any(key.startswith("model.py:") for key in lines)
    assert "(data)" in lines
