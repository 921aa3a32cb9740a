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
