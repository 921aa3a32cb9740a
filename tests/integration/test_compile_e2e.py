"""``xlacli compile`` on the bundled examples, on XLA:CPU, checked against
torch_xla's own counters. One capture per example, shared by many assertions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, MODELS, REPO, CliResult, run_cli
from tests.report_json import executions_per_step, step_records
from xlacli.capture.dump_stage import STAGING_SETTING
from xlacli.parse.metrics_report import parse_metrics_report
from xlacli.report.run_report import load_report

pytestmark = pytest.mark.e2e

REQUIRED_KEYS = {
    "schema_version",
    "model",
    "device",
    "steps",
    "run_dir",
    "compilations",
    "executions",
    "total_compile_time_s",
    "graphs",
    "step_runs",
}
GRAPH_KEYS = {
    "hash",
    "site",
    "ir_nodes",
    "hlo_instructions",
    "optimized_hlo_instructions",
    "fusions",
    "compile_time_s",
    "executions",
    "execute_time_s",
    "files",
}


def _capture(
    tmp_path_factory, name: str, *args: str, env: dict[str, str] | None = None
) -> tuple[CliResult, dict]:
    run = tmp_path_factory.mktemp(name) / "run"
    result = run_cli("compile", *args, "--out", run, "--format", "json", cwd=REPO, env=env)
    assert result.code == 0, result.stderr
    return result, json.loads(result.stdout)


@pytest.fixture(scope="module")
def staging(tmp_path_factory):
    """Where the mlp capture's XLA dump is staged (capture/dump_stage.py)."""
    return tmp_path_factory.mktemp("dump-staging")


@pytest.fixture(scope="module")
def mlp(tmp_path_factory, staging):
    return _capture(tmp_path_factory, "mlp", "examples/mlp.py", env={STAGING_SETTING: str(staging)})


@pytest.fixture(scope="module")
def dynamic(capture_once):
    # The documented command, shared with the golden report (mlp's --format json is this
    # file's test of JSON alone on stdout).
    captured = capture_once("compile", "examples/dynamic_shapes.py", "--steps", "4")
    assert captured.result.code == 0, captured.result.stderr
    return captured.result, captured.report


def _metrics(report: dict):
    return parse_metrics_report((Path(report["run_dir"]) / "metrics.txt").read_text())


def assert_matches_torch_xla_counters(report: dict) -> None:
    metrics = _metrics(report)
    assert report["compilations"] == metrics.counter("UncachedCompile")
    assert report["executions"] == metrics.counter("ExecuteComputation")
    assert sum(g["compilations"] for g in report["graphs"]) == report["compilations"]
    assert sum(g["executions"] for g in report["graphs"]) == report["executions"]
    compile_time_s = metrics.metrics["CompileTime"].accumulator / 1e9
    assert sum(g["compile_time_s"] for g in report["graphs"]) == pytest.approx(
        compile_time_s, rel=1e-6
    )
    assert report["total_compile_time_s"] == pytest.approx(compile_time_s, rel=1e-6)


def test_json_report_shape(mlp):
    result, report = mlp
    assert report.keys() >= REQUIRED_KEYS
    assert report["schema_version"] == 2
    assert report["model"] == str(EXAMPLES / "mlp.py")
    assert report["device"] == "CPU"
    assert report["steps"] == 3  # the default: two warm-up steps and a cached one
    assert report["graphs"] and all(g.keys() >= GRAPH_KEYS for g in report["graphs"])
    assert "xlacli: error" not in result.stderr


def test_mlp_compiles_once_and_runs_three_times(mlp):
    _, report = mlp
    assert_matches_torch_xla_counters(report)
    assert report["compilations"] == 1 and report["executions"] == 3
    (graph,) = report["graphs"]
    assert graph["site"] == f"{EXAMPLES / 'mlp.py'}:24"  # MLP.forward, which the step ran
    assert graph["trigger"] == "step_end"
    assert graph["ir_nodes"] > 5
    assert graph["hlo_instructions"] > 10 and graph["optimized_hlo_instructions"] > 10
    assert graph["fusions"] >= 1
    assert graph["input_bytes"] >= 4 * (64 * 128 + 128 * 128 + 128 * 10)  # the weights
    assert graph["output_bytes"] >= 4 * 8 * 10
    assert graph["execute_time_s"] > 0 and graph["first_step"] == 0


def test_graph_files_are_kept_and_noise_dropped(mlp):
    _, report = mlp
    run = Path(report["run_dir"])
    (graph,) = report["graphs"]
    assert set(graph["files"]) >= {"ir", "hlo_before", "hlo_after", "buffer_assignment"}
    for relative in graph["files"].values():
        assert (run / relative).is_file()
    assert "location=" in (run / graph["files"]["ir"]).read_text()
    assert (run / graph["files"]["hlo_after"]).read_text().startswith("HloModule")
    leftovers = [p.name for p in run.rglob("*") if p.suffix in (".ll", ".mlir", ".o")]
    assert leftovers == []


def test_the_dump_was_staged_and_harvested(mlp, staging):
    # XLA wrote into the staging folder (no kernel file ever reached the run
    # folder's disk), and the parent moved the HLO out and removed the stage.
    _, report = mlp
    assert list(staging.iterdir()) == []
    assert report["graphs"][0]["files"]["hlo_after"].startswith("graphs/")


def test_report_reloads(mlp):
    _, report = mlp
    loaded = load_report(Path(report["run_dir"]))
    assert loaded.compilations == report["compilations"]
    assert [g.hash for g in loaded.graphs] == [g["hash"] for g in report["graphs"]]


def test_saved_run_renders_again(mlp):
    _, report = mlp
    result = run_cli("report", report["run_dir"], "--format", "json")
    assert result.code == 0, result.stderr
    assert json.loads(result.stdout) == report
    result = run_cli("report", report["run_dir"])
    assert result.code == 0 and report["graphs"][0]["hash"][:8] in result.stdout


def test_report_of_a_folder_that_is_not_a_run(tmp_path):
    result = run_cli("report", tmp_path)
    assert result.code == 2 and "is not an xlacli run folder" in result.stderr


def test_dynamic_shapes_new_length_new_graph(dynamic):
    _, report = dynamic
    assert_matches_torch_xla_counters(report)
    assert report["compilations"] == 2 and report["executions"] == 4
    first, second = report["graphs"]
    assert (first["first_step"], second["first_step"]) == (0, 2)
    assert (first["executions"], second["executions"]) == (3, 1)
    per_step = [(s["compilations"], s["executions"]) for s in step_records(report)]
    assert per_step == [(1, 1), (0, 1), (1, 1), (0, 1)]
    assert step_records(report)[2]["input_signature"] == ["input 0 s64[4,24]"]


def test_text_report(tmp_path):
    result = run_cli(
        "compile", "examples/dynamic_shapes.py", "--steps", "3", "--out", tmp_path / "run", cwd=REPO
    )
    assert result.code == 0, result.stderr
    out = result.stdout
    assert "xlacli compile examples/dynamic_shapes.py" in out
    assert "examples/dynamic_shapes.py:23" in out  # Encoder.forward
    assert "2 compilations" in out and "3 executions" in out and "2 distinct graphs" in out
    assert f"Run folder: {tmp_path / 'run'}" in out
    assert "Next: xlacli diff-hlo" in out  # two graphs of one site: diff them
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    for graph in report["graphs"]:
        assert graph["hash"][:8] in out


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("conv", ("examples/conv.py", "--steps", "3")),
        ("transformer", ("examples/transformer.py", "--train", "--optimizer", "adamw")),
        ("factory", (f"{MODELS / 'bad' / 'factory.py'}:make_pair",)),
    ],
)
def test_examples_match_torch_xla_counters(tmp_path_factory, name, args):
    _, report = _capture(tmp_path_factory, name, *args)
    assert_matches_torch_xla_counters(report)
    assert report["compilations"] >= 1
    assert all(g["site"] for g in report["graphs"])


def test_executions_still_running_when_their_step_ends_count_once_in_it(tmp_path_factory):
    """Steps do not wait for the device: each counts its graph's lookup, and
    what loading the model ran counts in no step."""
    _, report = _capture(
        tmp_path_factory, "setup_syncs", f"{MODELS / 'setup_syncs.py'}", "--steps", "6"
    )
    assert_matches_torch_xla_counters(report)
    assert executions_per_step(report) == [1] * 6
    setup = [g["executions"] for g in report["graphs"] if g["first_step"] is None]
    assert sorted(setup) == [1, 2]  # the loading's two graphs: three runs


def test_console_script_and_module_agree(tmp_path):
    script = Path(sys.executable).parent / "xlacli"
    for command in ([str(script)], [sys.executable, "-m", "xlacli"]):
        completed = subprocess.run([*command, "--version"], capture_output=True, text=True)
        assert completed.returncode == 0 and completed.stdout.startswith("xlacli ")
