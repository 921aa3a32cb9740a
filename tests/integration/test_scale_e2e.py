"""Capture cost that does not grow with the run (issue 23): a training step
with SGD and momentum (two graphs: the first update creates the momentum
buffers), run for many cached steps. The IR of each graph is written once,
not once per sync, and the report still equals torch_xla's counters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, run_cli
from tests.integration.test_compile_e2e import assert_matches_torch_xla_counters
from tests.report_json import step_records
from xlacli.parse.ir_dump import parse_ir_dump

pytestmark = pytest.mark.e2e

STEPS = 60  # past NATIVE_IR_DUMP_MAX_STEPS: the child writes the IR
TRAIN_STEP = REPO / "benchmarks" / "scale" / "train_step.py"


@pytest.fixture(scope="module")
def train(tmp_path_factory) -> dict:
    run = tmp_path_factory.mktemp("scale") / "run"
    result = run_cli(
        "compile", TRAIN_STEP, "--steps", str(STEPS), "--out", run, "--format", "json", cwd=REPO
    )
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def _ir_blocks(report: dict) -> list:
    (dump,) = (Path(report["run_dir"]) / "raw").glob("ir-dump.txt.*")
    return parse_ir_dump(dump.read_text())


def test_counts_equal_torch_xla(train):
    assert_matches_torch_xla_counters(train)
    assert train["compilations"] == 2 and train["executions"] == STEPS


def test_each_graph_ir_is_written_once_not_once_per_sync(train):
    blocks = _ir_blocks(train)
    assert len(blocks) == train["compilations"]  # XLA_SAVE_TENSORS_FILE: one per step
    assert [block.compile_index for block in blocks] == [0, 1]


def test_each_graph_keeps_its_ir(train):
    for graph in train["graphs"]:
        assert graph["ir_nodes"] > 20
        ir_file = Path(train["run_dir"]) / graph["files"]["ir"]
        text = ir_file.read_text()
        assert f"Graph Hash: {graph['hash']}" in text
        assert "location=" in text  # source locations, as torch_xla's dump has them


def test_the_momentum_graph_is_explained_from_its_ir(train):
    first, second = train["events"]
    assert first["cause"]["category"] == "first_compile"
    assert second["cause"]["category"] == "optimizer_state"  # read from the two graphs' IR


def _debug_log(report: dict) -> str:
    return (Path(report["run_dir"]) / "raw" / "pt-xla-debug.txt").read_text()


def test_the_debug_log_does_not_grow_with_the_steps(train):
    """torch_xla writes an execution block per step; the child folds the repeats."""
    log = _debug_log(train)
    assert log.count("Execution Analysis: Execution Cause") <= 4  # STEPS without folding
    assert f"the last 1 blocks, {STEPS - 3} more times" in log


def test_each_step_still_runs_its_graph(train):
    records = step_records(train)
    assert [r["executions"] for r in records] == [1] * STEPS
    step_graph = train["graphs"][-1]["hash"]
    assert all(r["graph_hashes"] == [step_graph] for r in records[2:])
    assert train["graphs"][-1]["executions"] == STEPS - 1
    # Kept as runs of equal steps: the two compiling steps, then one run of the rest.
    assert [(r["first_step"], r["steps"]) for r in train["step_runs"]] == [
        (0, 1), (1, 1), (2, STEPS - 2),
    ]  # fmt: skip


LOGGED_STEPS = 40


@pytest.fixture(scope="module")
def logged(tmp_path_factory) -> dict:
    """A value read and a sync in every step: two blocks a step, folded as a pair."""
    run = tmp_path_factory.mktemp("scale") / "run"
    model = REPO / "tests" / "assets" / "models" / "logged_loss.py"
    args = ("--steps", str(LOGGED_STEPS), "--out", run, "--format", "json")
    result = run_cli("compile", model, *args, cwd=REPO)
    assert result.code == 0, result.stderr
    return json.loads(result.stdout)


def test_value_reads_are_counted_in_every_step(logged):
    assert_matches_torch_xla_counters(logged)
    assert logged["executions"] == 2 * LOGGED_STEPS
    records = step_records(logged)
    assert [r["value_reads"] for r in records] == [1] * LOGGED_STEPS
    assert [r["executions"] for r in records] == [2] * LOGGED_STEPS


def test_the_value_read_keeps_its_line(logged):
    read = next(g for g in logged["graphs"] if g["trigger"] == "host_sync")
    assert read["site"].endswith("logged_loss.py:31")
    assert read["executions"] == LOGGED_STEPS


def test_two_blocks_a_step_fold_as_a_pair(logged):
    log = _debug_log(logged)
    assert "Repeated Analysis: the last 2 blocks," in log
    assert log.count("Execution Analysis: Execution Cause") < 10  # 80 without folding
