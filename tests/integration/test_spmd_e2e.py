"""SPMD models under ``xlacli compile --devices 4`` on XLA:CPU: no crash, the
counts of a bare run, the collectives of the partitioned HLO, the sharding
recompile at its line. One capture (and one bare run) per example."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import MODELS, REPO, assert_clean_error, run_cli
from tests.recorded_cli import run_bare
from tests.report_json import executions_per_step

pytestmark = pytest.mark.e2e

DEVICES = "4"
SPMD = REPO / "examples" / "spmd"
# An instruction whose opcode is a collective (async ones counted at their -start).
COLLECTIVE = re.compile(
    r"^\s*(?:ROOT )?%\S+ = .*? (all-reduce|all-gather|reduce-scatter|all-to-all|"
    r"collective-permute)(?:-start)?\(",
    re.MULTILINE,
)


def _bare_counters(model: Path, steps: int) -> dict[str, int]:
    completed = run_bare(
        [REPO / "benchmarks/spmd/bare_spmd.py", model, steps], env={"CPU_NUM_DEVICES": DEVICES}
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _capture(capture_once, name: str, steps: int) -> dict:
    """The example's documented run (shared with its golden report) and a bare run's counters."""
    model = SPMD / f"{name}.py"
    shown = model.relative_to(REPO).as_posix()
    captured = capture_once("compile", shown, "--devices", DEVICES, "--steps", str(steps))
    assert captured.result.code == 0, captured.result.stderr
    return {"report": captured.report, "run": captured.run, "bare": _bare_counters(model, steps)}


@pytest.fixture(scope="module")
def data_parallel(capture_once):
    return _capture(capture_once, "data_parallel_mlp", 3)


@pytest.fixture(scope="module")
def transformer(capture_once):
    return _capture(capture_once, "transformer_block", 3)


@pytest.fixture(scope="module")
def changed(capture_once):
    return _capture(capture_once, "sharding_change", 5)


@pytest.fixture(params=["data_parallel", "transformer", "changed"])
def capture(request):
    return request.getfixturevalue(request.param)


def test_counts_equal_a_bare_run(capture):
    report, bare = capture["report"], capture["bare"]
    assert report["error"] is None
    assert report["compilations"] == bare["UncachedCompile"]
    assert report["executions"] == bare["ExecuteReplicated"] > 0
    assert sum(executions_per_step(report)) == bare["ExecuteReplicated"]
    assert all(graph["execute_time_s"] is not None for graph in report["graphs"])


def test_collectives_equal_the_partitioned_hlo(capture):
    for graph in capture["report"]["graphs"]:
        after = (capture["run"] / graph["files"]["hlo_after"]).read_text()
        expected: dict[str, int] = {}
        for kind in COLLECTIVE.findall(after):
            expected[kind] = expected.get(kind, 0) + 1
        reported = [op["kind"] for op in graph["spmd"]["collectives"]]
        assert {kind: reported.count(kind) for kind in set(reported)} == expected
        assert all(op["bytes"] > 0 and op["replica_groups"] for op in graph["spmd"]["collectives"])


def test_data_parallel_splits_the_batch_and_all_reduces(data_parallel):
    graph = data_parallel["report"]["graphs"][-1]["spmd"]
    assert graph["devices"] == 4
    assert graph["mesh"]["shape"] == [4] and graph["mesh"]["axis_names"] == ["data"]
    batch = next(t for t in graph["inputs"] if t["type"] == "f32[16,32]")
    assert batch["axes"] == "(data, None)" and batch["per_device_type"] == "f32[4,32]"
    assert batch["location"].endswith("data_parallel_mlp.py:35")
    kinds = {op["kind"] for op in graph["collectives"]}
    assert kinds == {"all-reduce"}


def test_transformer_shards_weights_two_ways(transformer):
    graph = transformer["report"]["graphs"][0]["spmd"]
    assert graph["mesh"]["shape"] == [2, 2]
    assert graph["mesh"]["axis_names"] == ["data", "model"]
    axes = {t["type"]: t["axes"] for t in graph["inputs"]}
    assert axes["f32[96,32]"] == "(model, None)"  # qkv: column-parallel
    assert axes["f32[32,128]"] == "(None, model)"  # fc2: row-parallel
    assert axes["f32[4,8,32]"] == "(data, None, None)"  # the batch
    # Per-device memory comes from the partitioned module: the batch's shard, not the batch.
    batch = next(t for t in graph["inputs"] if t["type"] == "f32[4,8,32]")
    assert batch["per_device_type"] == "f32[2,8,32]"
    assert any(
        op["location"] and "transformer_block.py" in op["location"] for op in graph["collectives"]
    )


def test_text_report_shows_the_spmd_block(transformer):
    result = run_cli("report", transformer["run"], cwd=REPO)
    assert result.code == 0, result.stderr
    assert "mesh 2×2 (data, model)" in result.stdout
    assert "(model, None)" in result.stdout and "all-reduce" in result.stdout


def test_sharding_recompile_is_explained_at_its_line(changed):
    report = changed["report"]
    steady = [event for event in report["events"] if event["steady_state"]]
    assert len(steady) == 1 and steady[0]["step"] == 3
    cause = steady[0]["cause"]
    assert cause["category"] == "sharding"
    assert cause["location"].endswith("sharding_change.py:38")
    assert "f32[8,16]" in cause["detail"]


def test_check_counts_collectives(changed, tmp_path):
    from xlacli.analysis.check.baseline import baseline_from_report
    from xlacli.report.run_report import load_report

    report = load_report(changed["run"])
    baseline = baseline_from_report(report, tmp_path / "baseline.json", "sgd")
    keys = [key for key in baseline.collectives if key.endswith("all-reduce")]
    assert len(keys) == 2 and all(baseline.collectives[key] == 1 for key in keys)


@pytest.mark.parametrize(
    ("model", "fragment"),
    [
        ("spmd_more_devices.py", "must match the global number of devices (4)"),
        ("spmd_bad_mesh.py", "must match mesh size (6)"),
    ],
)
def test_impossible_mesh_is_a_usage_error(model, fragment, tmp_path):
    # One live: the child turns torch_xla's assertion into a usage error (child/spmd.py).
    live = model == "spmd_bad_mesh.py"
    result = run_cli(
        "compile", MODELS / model, "--devices", DEVICES, "--out", tmp_path / "run", cwd=REPO,
        live=live,
    )  # fmt: skip
    mesh_line = f"the mesh at {(MODELS / model).relative_to(REPO)}:12"
    assert_clean_error(result, 2, fragment, mesh_line)
    assert "--devices N" in result.stderr  # the hint says how to get more devices


def test_a_profile_on_a_mesh_gives_one_devices_time(capture_once):
    """Issue 40: the trace holds each op once per device; summed over 4 devices the
    time by line was 4 times the window's device time. It is per device, and says so."""
    captured = capture_once(
        "profile", "examples/spmd/data_parallel_mlp.py", "--devices", "4", "--steps", "5",
        "--warmup", "2",
    )  # fmt: skip
    assert captured.result.code == 0, captured.result.stderr
    summary = json.loads((captured.run / "profile.json").read_text())
    by_line = sum(line["time_s"] for line in summary["lines"])
    busy = summary["breakdown"]["device_busy_s"]
    assert 0 < by_line <= busy * 1.05, (by_line, busy)
    assert any("per device" in note for note in summary["notes"]), summary["notes"]
    assert all(op["count"] <= 5 for op in summary["top_ops"]), summary["top_ops"]
    assert "per device" in captured.result.stdout
