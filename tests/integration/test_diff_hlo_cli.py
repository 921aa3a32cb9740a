"""``xlacli diff-hlo`` through the real CLI: exit codes, JSON, errors, folders, no torch."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import CliResult, assert_clean_error, run_cli
from xlacli.cli.main import main

ASSETS = Path(__file__).resolve().parents[1] / "assets" / "hlo"
RELU = ASSETS / "torch_mlp_relu.after_optimizations.txt"
GELU = ASSETS / "torch_mlp_gelu.after_optimizations.txt"
PROTO_TEXT = ASSETS / "proto_module.pbtxt"  # an HloModuleProto in protobuf text format
PROTO_HLO = ASSETS / "proto_module.hlo"  # the same module as HLO text
CHANGE_KEYS = {"kind", "opcode", "left", "right", "reasons", "source"}


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rich folds long source paths to the terminal's width; tests read whole lines.
    monkeypatch.setenv("COLUMNS", "200")


def _run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["diff-hlo", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _renamed_and_reordered(source: Path, target: Path) -> Path:
    """The same program: every %name renamed, the computations in reverse order."""
    text = re.sub(r"%([\w.\-]+)", r"%\1_v2", source.read_text())
    header, *computations = text.rstrip("\n").split("\n\n")
    target.write_text("\n\n".join([header, *reversed(computations)]) + "\n")
    return target


def test_renamed_and_reordered_text_is_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = _renamed_and_reordered(
        ASSETS / "torch_mlp_train.after_optimizations.txt", tmp_path / "train.txt"
    )
    code, out, err = _run(capsys, ASSETS / "torch_mlp_train.after_optimizations.txt", other)
    assert (code, err) == (0, "")
    assert "identical" in out


def test_different_modules_exit_1_with_patterns_and_details(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(capsys, RELU, GELU)
    assert code == 1
    assert "different" in out and "aten__gelu" in out and "activation.py:" in out
    code, detailed, _ = _run(capsys, "--details", RELU, GELU)
    assert code == 1
    assert "every change" in detailed and "erf.0" in detailed


def test_json_is_alone_on_stdout_with_the_documented_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, "--format", "json", RELU, GELU)
    assert (code, err) == (1, "")
    report = json.loads(out)
    assert report["identical"] is False
    assert report["summary"] == {"unchanged": 17, "changed": 1, "added": 11, "removed": 3}
    assert report["changes"] and all(change.keys() >= CHANGE_KEYS for change in report["changes"])
    removed = [c for c in report["changes"] if c["kind"] == "removed"]
    assert {c["source"]["op_type"] for c in removed} == {"aten__relu"}
    assert all(c["right"] is None and c["left"]["name"] for c in removed)
    assert report["patterns"][0]["count"] == 3
    assert (
        list(out) and out == json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    )


@pytest.mark.parametrize(
    ("make_args", "message"),
    [
        (lambda tmp: [tmp / "missing.txt", RELU], "missing.txt: no such file or folder"),
        (lambda tmp: [tmp, RELU], "is a folder but"),
        (lambda tmp: [tmp, tmp], "holds neither report.json"),
        (lambda tmp: [_malformed(tmp), RELU], "bad.txt:3:7: malformed HLO: expected a shape"),
        (
            lambda tmp: [_malformed_proto(tmp), PROTO_HLO],
            "bad.pbtxt:3:8: malformed HLO: expected ':' or '{' after name",
        ),
    ],
)
def test_errors_are_one_line_with_exit_2_and_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_args: object, message: str
) -> None:
    code, out, err = _run(capsys, *make_args(tmp_path))  # type: ignore[operator]
    assert out == ""
    assert_clean_error(CliResult(code, out, err), 2, message)
    assert err.startswith("xlacli: error: ")
    assert "Traceback" not in err
    assert len([line for line in err.splitlines() if not line.startswith("hint:")]) == 1


def _malformed(folder: Path) -> Path:
    path = folder / "bad.txt"
    path.write_text("HloModule m\nENTRY e {\n  a = f32[2 parameter(0)\n}\n")
    return path


def _malformed_proto(folder: Path) -> Path:
    path = folder / "bad.pbtxt"
    path.write_text('name: "m"\ncomputations {\n  name "main"\n}\n')
    return path


def test_a_textproto_module_diffs_against_its_hlo_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, PROTO_TEXT, PROTO_HLO)
    assert (code, err) == (0, ""), out
    assert "identical" in out
    changed = tmp_path / "changed.pbtxt"
    changed.write_text(PROTO_TEXT.read_text().replace("dimensions: 1\n", "dimensions: 0\n", 1))
    code, out, _ = _run(capsys, "--format", "json", changed, PROTO_HLO)
    assert code == 1
    assert json.loads(out)["summary"]["changed"] >= 1


def _dump(folder: Path, goldens: list[str]) -> Path:
    """An --xla_dump_to folder: module_NNNN.NAME.{before,cpu_after}_optimizations.txt."""
    folder.mkdir()
    for number, golden in enumerate(goldens):
        for stage, suffix in (("before", "before"), ("after", "cpu_after")):
            source = ASSETS / f"torch_{golden}.{stage}_optimizations.txt"
            name = source.read_text().split(",", 1)[0].removeprefix("HloModule ")
            shutil.copyfile(
                source, folder / f"module_{number:04d}.{name}.{suffix}_optimizations.txt"
            )
    (folder / "module_0000.ignored.cpu_after_optimizations-buffer-assignment.txt").write_text("")
    return folder


def test_dump_folders_pair_by_structure_name_and_likeness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    left = _dump(tmp_path / "a", ["mlp_relu", "conv"])
    right = _dump(tmp_path / "b", ["conv", "mlp_gelu", "transformer"])
    for stage in ("pre", "post"):
        code, out, _ = _run(capsys, "--format", "json", "--stage", stage, left, right)
        report = json.loads(out)
        assert code == 1
        assert (report["inputs"], report["stage"]) == ("xla-dumps", stage)
        labels = {m["label"]: m["identical"] for m in report["modules"]}
        assert labels == {
            "SyncTensorsGraph.70": True,  # the same program, found by its fingerprint
            "SyncTensorsGraph.24 → SyncTensorsGraph.32": False,  # found by likeness
        }
        assert (report["left_only"], report["right_only"]) == ([], ["SyncTensorsGraph.221"])


def _run_folder(folder: Path, graphs: list[tuple[str, str | None, str]]) -> Path:
    """A run folder as `xlacli compile` writes it: report.json and graphs/<hash>/ files."""
    records = []
    for graph_hash, site, golden in graphs:
        graph_dir = folder / "graphs" / graph_hash
        graph_dir.mkdir(parents=True)
        files = {}
        for stage, key in (("before", "hlo_before"), ("after", "hlo_after")):
            shutil.copyfile(
                ASSETS / f"torch_{golden}.{stage}_optimizations.txt", graph_dir / f"hlo.{stage}.txt"
            )
            files[key] = f"graphs/{graph_hash}/hlo.{stage}.txt"
        records.append({"hash": graph_hash, "site": site, "files": files})
    (folder / "report.json").write_text(json.dumps({"schema_version": 1, "graphs": records}))
    return folder


def test_run_folders_pair_graphs_by_hash_then_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    left = _run_folder(
        tmp_path / "a",
        [("1111aaaa2222", "model.py:31", "mlp_relu"), ("3333bbbb4444", "model.py:40", "conv")],
    )
    right = _run_folder(
        tmp_path / "b",
        [
            ("3333bbbb4444", "model.py:40", "conv"),
            ("5555cccc6666", "model.py:31", "mlp_gelu"),
            ("7777dddd8888", None, "transformer"),
        ],
    )
    code, out, _ = _run(capsys, "--format", "json", "--stage", "pre", left, right)
    report = json.loads(out)
    assert (code, report["inputs"]) == (1, "run-folders")
    assert {m["label"]: m["identical"] for m in report["modules"]} == {
        "model.py:40 (3333bbbb)": True,
        "model.py:31 (5555cccc)": False,
    }
    assert report["right_only"] == ["7777dddd"]
    relu_pair = next(m for m in report["modules"] if not m["identical"])
    assert relu_pair["left"]["file"].endswith("graphs/1111aaaa2222/hlo.before.txt")


def test_run_folders_with_nothing_to_compare_are_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(
            json.dumps({"schema_version": 1, "graphs": [{"hash": "ab", "site": None}]})
        )
    code, _, err = _run(capsys, tmp_path / "a", tmp_path / "b")
    assert code == 2
    assert "no graph with post-optimization HLO" in err


def test_python_m_xlacli_runs_without_importing_torch(tmp_path: Path) -> None:
    probe = (
        "import sys, json\n"
        "from xlacli.cli.main import main\n"
        f"code = main(['diff-hlo', {str(RELU)!r}, {str(GELU)!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_xla'))\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert json.loads(result.stderr.strip().splitlines()[-1]) == {"code": 1, "heavy": []}
    module = run_cli("diff-hlo", "--format", "json", RELU, GELU)
    assert module.code == 1
    assert json.loads(module.stdout)["summary"]["added"] == 11
    malformed = run_cli("diff-hlo", ASSETS / "features.txt", tmp_path / "missing.txt")
    assert_clean_error(malformed, 2, "missing.txt: no such file or folder")
