"""Pairing the graphs of two run folders, and the modules of multi-module files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import ASSETS

from tests.conftest import run_cli
from xlacli.hlo import parse_hlo
from xlacli.hlo.diff import diff_modules
from xlacli.hlo.inputs import diff_paths, pair_inputs

MLP = Path(__file__).resolve().parents[3] / "examples" / "mlp.py"


def _run_folder(folder: Path, graphs: list[tuple[str, str | None, str]]) -> Path:
    """A run folder as `xlacli compile` writes it: report.json and graphs/<hash>/ files."""
    records = []
    for graph_hash, site, golden in graphs:
        graph_dir = folder / "graphs" / graph_hash
        graph_dir.mkdir(parents=True)
        shutil.copyfile(ASSETS / f"torch_{golden}.after_optimizations.txt", graph_dir / "hlo.txt")
        files = {"hlo_after": f"graphs/{graph_hash}/hlo.txt"}
        records.append({"hash": graph_hash, "site": site, "files": files})
    (folder / "report.json").write_text(json.dumps({"schema_version": 1, "graphs": records}))
    return folder


def test_two_graphs_at_one_site_pair_by_order_and_other_files_by_likeness(
    tmp_path: Path,
) -> None:
    # A training step: step 0, then step 1 with the optimizer state, at one site.
    left = _run_folder(
        tmp_path / "a",
        [("a1", "mlp.py:19", "mlp_relu"), ("a2", "mlp.py:19", "mlp_train")],
    )
    right = _run_folder(
        tmp_path / "b",
        [
            ("b1", "other.py:7", "mlp_gelu"),
            ("b2", "mlp.py:19", "mlp_gelu"),
            ("b3", "mlp.py:19", "mlp_train"),
        ],
    )
    paired = pair_inputs(left, right)
    how = sorted((pair.paired_by, pair.label) for pair in paired.pairs)
    assert how == [("site and order", "mlp.py:19 (b2)"), ("site and order", "mlp.py:19 (b3)")]
    assert paired.right_only == ("other.py:7 (b1)",)
    # Another model file: nothing shares a site, so graphs pair by likeness.
    other = _run_folder(tmp_path / "c", [("c1", "renamed.py:3", "mlp_gelu")])
    paired = pair_inputs(_run_folder(tmp_path / "d", [("d1", "mlp.py:19", "mlp_relu")]), other)
    assert [pair.paired_by for pair in paired.pairs] == ["structural likeness"]
    assert not paired.left_only and not paired.right_only


def test_multi_module_files_pair_by_name(tmp_path: Path) -> None:
    def module(name: str, opcode: str) -> str:
        return (
            f"HloModule {name}\nENTRY e {{\n  a = f32[2] parameter(0)\n"
            f"  ROOT b = f32[2] {opcode}(a)\n}}\n"
        )

    (tmp_path / "l.hlo").write_text(module("m1", "negate") + "// -----\n" + module("m2", "abs"))
    (tmp_path / "r.hlo").write_text(module("m2", "abs") + "\n// -----\n" + module("m1", "exp"))
    report = diff_paths(tmp_path / "l.hlo", tmp_path / "r.hlo")
    assert {module.label: module.identical for module in report.modules} == {
        "m1": False,
        "m2": True,
    }


def test_unused_parameters_of_a_comparator_do_not_differ_from_themselves() -> None:
    # Sort comparators often leave value parameters unused: nothing reaches them from the root.
    text = """HloModule m
compare {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  p2 = s32[] parameter(2)
  p3 = s32[] parameter(3)
  unused = f32[] constant(7)
  ROOT lt = pred[] compare(p0, p1), direction=LT
}
ENTRY e {
  k = f32[8] parameter(0)
  v = s32[8] parameter(1)
  ROOT s = (f32[8], s32[8]) sort(k, v), dimensions={0}, to_apply=compare
}
"""
    module = parse_hlo(text)
    diff = diff_modules(module, parse_hlo(text))
    assert diff.identical, diff.changes
    assert diff.unchanged == module.instruction_count


@pytest.fixture(scope="module")
def training_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real 3-step training runs of an MLP: ReLU, then GELU."""
    base = tmp_path_factory.mktemp("runs")
    source = MLP.read_text()
    assert "nn.ReLU()" in source
    runs = []
    for name, activation in (("relu", "nn.ReLU()"), ("gelu", "nn.GELU()")):
        model = base / name / "mlp.py"  # one file name: graphs keep their sites
        model.parent.mkdir()
        model.write_text(source.replace("nn.ReLU()", activation))
        out = base / f"{name}_run"
        result = run_cli("compile", model, "--train", "--steps", "3", "--out", out)
        assert result.code == 0, result.stderr
        runs.append(out)
    return runs[0], runs[1]


@pytest.mark.e2e
def test_two_training_runs_pair_every_graph(training_runs: tuple[Path, Path]) -> None:
    left, right = training_runs
    paired = pair_inputs(left, right)
    assert paired.pairs
    assert not paired.left_only and not paired.right_only
    assert paired.pairs
    assert {pair.paired_by for pair in paired.pairs} == {"site and order"}
