"""Memory, precision and checkpointing on examples/memory/: one capture per example.

The figures are checked against numbers the test computes itself from each run's
``buffer-assignment.txt``. The direction of each lever is asserted where the
backend lets it act: XLA:CPU computes bf16 matmuls in f32 and erases opt-barriers
before scheduling, so there the tests assert that the report says so instead.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import MODELS, run_cli

pytestmark = pytest.mark.e2e
VARIANTS = ("block", "block_bf16", "block_checkpoint")


@pytest.fixture(scope="module")
def runs(capture_once) -> dict[str, tuple[Path, dict, str]]:
    """Each example compiled for one step, as its docstring says (the golden reports
    run the same commands): (run folder, report.json, terminal report)."""
    captured = {}
    for variant in VARIANTS:
        run = capture_once("compile", f"examples/memory/{variant}.py", "--steps", "1")
        assert run.result.code == 0, run.result.stderr
        captured[variant] = (run.run, run.report, run.result.stdout)
    return captured


def the_graph(report: dict) -> dict:
    (graph,) = report["graphs"]
    return graph


def independent_peak(run: Path, graph: dict) -> tuple[int, int]:
    """XLA's peak and the temporaries in it, read from the file with this test's regexes."""
    text = (run / graph["files"]["buffer_assignment"]).read_text()
    stated = int(re.search(r"peak usage: ([\d ]+) bytes", text).group(1).replace(" ", ""))
    block = text.split("(peak):\n", 1)[1].split("  Stack trace breakdown", 1)[0]
    live = {
        name: int(size) for name, size in re.findall(r"^\s+(\S+?)\{\S*\}: (\d+) bytes", block, re.M)
    }
    temporaries = set()
    for allocation in re.split(r"^allocation ", text.split("\nTotal bytes used", 1)[0], flags=re.M):
        header = allocation.split("\n", 1)[0]
        roles = header.split(", ", 1)[1] if ", " in header else ""
        if roles.startswith(("parameter", "constant")) or "live-out" in roles or "output" in roles:
            continue
        temporaries.update(re.findall(r"^ value: <\d+ (\S+?)(?:\{\S*\})? @", allocation, re.M))
    assert sum(live.values()) == stated
    return stated, sum(size for name, size in live.items() if name in temporaries)


@pytest.mark.parametrize("variant", VARIANTS)
def test_peak_is_xlas_buffer_assignment(runs, variant):
    run, report, _ = runs[variant]
    graph = the_graph(report)
    peak, temporaries = independent_peak(run, graph)
    assert graph["memory"]["peak_bytes"] == peak
    assert graph["memory"]["peak_temp_bytes"] == temporaries
    (step,) = report["memory"]["steps"]
    assert step["peak_bytes"] == peak  # one graph in the step
    # XLA:CPU keeps no allocator statistics: the report says so, with no number.
    assert report["memory"]["device"] == {}
    assert "GetAllocatorStats is not supported" in report["memory"]["device_unavailable"]


def test_biggest_buffers_name_the_users_lines(runs):
    _, report, stdout = runs["block"]
    biggest = the_graph(report)["memory"]["biggest"]
    softmax = [b for b in biggest if b["op"] == "aten__softmax"]
    assert softmax and softmax[0]["shape"] == "f32[8,4,64,64]"
    assert softmax[0]["source"].endswith("examples/memory/block.py:40")
    assert (
        "f32[8,4,64,64] 512 KiB temporary, aten__softmax, at examples/memory/block.py:40" in stdout
    )
    assert "Device memory: not available on CPU" in stdout


def test_bf16_matmuls(runs):
    _, plain, _ = runs["block"]
    _, bf16, stdout = runs["block_bf16"]
    precision = the_graph(bf16)["precision"]
    assert precision["autocast"] == "xla:bf16"
    assert bf16["memory"]["autocast"] == {"0": "xla:bf16"}
    requested = precision["requested"]["dot_flops"]
    assert set(requested) == {"bf16"}  # every matmul, forward and backward
    assert set(the_graph(plain)["precision"]["requested"]["dot_flops"]) == {"f32"}
    peaks = [the_graph(r)["memory"]["peak_bytes"] for r in (plain, bf16)]
    if set(precision["optimized"]["dot_flops"]) == {"bf16"}:
        assert peaks[1] < peaks[0]  # a backend that keeps bf16 (TPU) halves the activations
    else:
        # XLA:CPU computes bf16 dots in f32, and keeps their results in f32.
        assert set(precision["optimized"]["dot_flops"]) == {"f32"}
        assert "matmuls bf16 100% (compiled: f32 100%)" in stdout
        assert "XLA:CPU upcasts bf16/f16 matmuls" in stdout


def test_checkpoint_barriers(runs):
    _, plain, _ = runs["block"]
    _, checkpointed, stdout = runs["block_checkpoint"]
    facts = the_graph(checkpointed)["checkpoint"]
    assert facts["opt_barriers"] == 2  # one per checkpointed block
    assert facts["recomputed_regions"] == 2
    assert the_graph(plain)["checkpoint"]["opt_barriers"] == 0
    dots = [
        the_graph(r)["precision"]["requested"]["dot_flops"]["f32"] for r in (plain, checkpointed)
    ]
    assert dots[1] > dots[0]  # the recomputation is in the program
    temporaries = [the_graph(r)["memory"]["peak_temp_bytes"] for r in (plain, checkpointed)]
    if facts["opt_barriers_optimized"]:
        assert temporaries[1] < temporaries[0]  # the barriers kept the recomputation late
    else:
        # XLA:CPU expands the barriers before scheduling: the report warns.
        assert "2 opt-barriers (0 after XLA)" in stdout
        assert "XLA removed the opt-barriers before scheduling" in stdout


def test_diff_hlo_compares_the_runs(runs):
    (plain, plain_report, _), (checkpointed, checkpointed_report, _) = (
        runs["block"],
        runs["block_checkpoint"],
    )
    result = run_cli("diff-hlo", plain, checkpointed, "--format", "json")
    assert result.code == 1, result.stderr
    (pair,) = json.loads(result.stdout)["memory"]
    assert pair["peak_bytes"] == [
        the_graph(r)["memory"]["peak_bytes"] for r in (plain_report, checkpointed_report)
    ]
    assert pair["opt_barriers"] == [0, 2]
    text = run_cli("diff-hlo", plain, checkpointed).stdout
    assert "opt-barriers 0 -> 2" in text


def test_check_fails_when_peak_memory_rises(tmp_path):
    for name in ("tiny.py",):
        shutil.copy(MODELS / "memory" / name, tmp_path / name)
    (tmp_path / "pyproject.toml").write_text("[tool.xlacli]\nmemory_tolerance = 0.1\n")
    args = ("check", "tiny.py", "--baseline", "baseline.json", "--steps", "1", "--warmup", "0")
    recorded = run_cli(*args, "--update-baseline", cwd=tmp_path)
    assert recorded.code == 0, recorded.stderr
    baseline = json.loads((tmp_path / "baseline.json").read_text())
    # The graph is named by its site (analysis/check/graph_match.py): tiny.py's one graph.
    [key] = baseline["peak_bytes"]
    assert key.startswith("tiny.py") and baseline["peak_bytes"][key] > 0
    model = tmp_path / "tiny.py"
    model.write_text(model.read_text().replace("HIDDEN = 64", "HIDDEN = 1024"))
    result = run_cli(*args, cwd=tmp_path)
    assert result.code == 1, result.stderr
    [check_file] = (tmp_path / ".xlacli" / "runs").glob("*/check.json")
    checks = json.loads(check_file.read_text())["checks"]
    [peak] = [row for row in checks if row["name"] == f"peak memory {key}"]
    assert peak["status"] == "regression" and "(tolerance 10%)" in peak["detail"]
    assert re.search(r"biggest new buffer: f32\[\d+,1024\]|f32\[1024,\d+\]", peak["detail"])
    assert "peak memory tiny.py" in result.stderr  # the one-line verdict names it too


def test_torch_checkpoint_gets_the_torch_xla_hint():
    result = run_cli("compile", MODELS / "memory" / "torch_checkpoint.py", "--steps", "1")
    assert result.code == 3
    assert "module 'torch' has no attribute 'xla'" in result.stderr
    assert "torch_xla.utils.checkpoint.checkpoint" in result.stderr
