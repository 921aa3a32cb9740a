"""Peak memory in check baselines: stable figures and a regression that names the buffer."""

from pathlib import Path

import pytest

from tests.unit.memory.test_memory import graph
from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION
from xlacli.analysis.check.memory_baseline import buffers_from_json, memory_baseline
from xlacli.analysis.check.memory_check import compare_peaks
from xlacli.analysis.check.stable_paths import stable_location
from xlacli.config import load_config
from xlacli.errors import UsageError
from xlacli.report.memory import BufferRecord, GraphMemory

SOFTMAX = {"shape": "f32[8,4,64,64]", "bytes": 524288, "op": "aten__softmax", "source": "b.py:40"}
GELU = {"shape": "f32[8,64,1024]", "bytes": 2097152, "op": "aten__gelu", "source": "b.py:41"}


def test_regression_names_the_graph_and_the_biggest_new_buffer():
    (result,) = compare_peaks(
        {"b.py#0": 1_000_000},
        {"b.py#0": 3_000_000},
        {"b.py#0": [SOFTMAX, GELU]},
        {"b.py#0": [SOFTMAX]},
        0.05,
    )
    assert result.status == REGRESSION
    assert result.name == "peak memory b.py#0"
    assert "+200% (tolerance 5%)" in result.detail
    assert "biggest new buffer: f32[8,64,1024] 2.00 MiB (aten__gelu at b.py:41)" in result.detail


@pytest.mark.parametrize(
    ("after", "status"), [(1_040_000, OK), (1_060_000, REGRESSION), (900_000, IMPROVEMENT)]
)
def test_tolerance(after, status):
    (result,) = compare_peaks({"g": 1_000_000}, {"g": after}, {}, {}, 0.05)
    assert result.status == status


def test_graphs_on_one_side_only_are_left_to_the_graph_checks():
    assert compare_peaks({"a": 1}, {"b": 2}, {}, {}, 0.0) == []


def test_baseline_figures_are_machine_independent(tmp_path):
    buffers = (
        BufferRecord(
            "dot.1{}",
            64,
            "f32[4,4]",
            "temporary",
            "aten__mm",
            "/x/lib/python3.11/site-packages/torch/nn/modules/linear.py:134",
        ),
        BufferRecord("add{}", 64, "f32[4,4]", "output", "aten__add", str(tmp_path / "m.py:9")),
    )
    record = graph("e" * 32, memory=GraphMemory(128, 64, None, None, None, buffers))
    peaks, kept = memory_baseline([("m.py#0", record), ("m.py#1", graph("f" * 32))], tmp_path)
    assert peaks == {"m.py#0": 128}
    assert [b["source"] for b in kept["m.py#0"]] == ["torch/nn/modules/linear.py:134", "m.py:9"]
    assert buffers_from_json({"m.py#0": kept["m.py#0"], "bad": 3}) == {"m.py#0": kept["m.py#0"]}
    assert stable_location(None, tmp_path) == ""


def test_memory_tolerance_in_pyproject(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[tool.xlacli]\nmemory_tolerance = 0.1\n")
    assert load_config(tmp_path).memory_tolerance == 0.1
    (tmp_path / "pyproject.toml").write_text('[tool.xlacli]\nmemory_tolerance = "10%"\n')
    with pytest.raises(UsageError, match="memory_tolerance must be a number"):
        load_config(tmp_path)
