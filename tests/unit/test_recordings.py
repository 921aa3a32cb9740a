"""The recordings' machinery (tests/recording.py): paths out and back in, byte for
byte, and a recording that no longer stands for its command is told."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.recorded_cli import recorded_call
from tests.recording import (
    PATH_FIELDS,
    RECORDINGS,
    REPO,
    archive_file,
    load_recording,
    meta_file,
    rewrite_proto_strings,
    stale_reason,
)
from xlacli.parse.hlo_stacks import parse_hlo_stacks

MLP = ["compile", "examples/mlp.py"]


MLP_CALL = recorded_call(MLP, REPO, None, shared=True)
EXAMPLES_DIR = {"@TARGET@": str(REPO / "examples"), "@CWD@": str(REPO)}


@pytest.fixture
def mlp_recording() -> Path:
    if not meta_file(MLP_CALL.recording).exists():
        pytest.fail(
            f"no recording of {MLP}: XLACLI_RECORD=1 pytest tests/integration/test_report_golden.py"
        )
    return MLP_CALL.recording


def test_a_recorded_protobuf_gets_this_machines_paths_and_back(mlp_recording, tmp_path):
    load_recording(mlp_recording, tmp_path, EXAMPLES_DIR)
    here = next(tmp_path.rglob("*before_optimizations.hlo.pb")).read_bytes()
    # Every stack frame names the checkout this test runs from, and parses.
    files = {frame.file for op in parse_hlo_stacks(here) for frame in op.stack}
    assert str(REPO / "examples" / "mlp.py") in files
    assert not any("@" in file for file in files)
    back = rewrite_proto_strings(here, PATH_FIELDS, lambda s: s.replace(str(REPO), "@REPO@"))
    again = rewrite_proto_strings(back, PATH_FIELDS, lambda s: s.replace("@REPO@", str(REPO)))
    assert again == here and len(back) != len(here)


def test_loading_a_recording_fills_in_the_run_folder(mlp_recording, tmp_path):
    ended = load_recording(mlp_recording, tmp_path, EXAMPLES_DIR)
    assert ended["returncode"] == 0
    text = (tmp_path / "events.jsonl").read_text()
    assert "@REPO@" not in text and "@SITE@" not in text and "@TARGET@" not in text
    assert f'"{REPO / "examples" / "mlp.py"}' in text


def test_a_changed_file_makes_its_recording_stale(mlp_recording, tmp_path):
    assert stale_reason(mlp_recording, MLP_CALL.words, MLP_CALL.places) is None
    copy = tmp_path / mlp_recording.name
    shutil.copy(meta_file(mlp_recording), meta_file(copy))
    shutil.copy(archive_file(mlp_recording), archive_file(copy))
    meta = json.loads(meta_file(copy).read_text())
    assert "@TARGET@/mlp.py" in meta["sources"]
    meta["sources"]["@TARGET@/mlp.py"] = "0" * 64
    meta_file(copy).write_text(json.dumps(meta))
    assert "@TARGET@/mlp.py changed" in stale_reason(copy, MLP_CALL.words, MLP_CALL.places)
    other = [*MLP_CALL.words, "--steps", "9"]
    assert "recorded `compile @TARGET@/mlp.py" in stale_reason(copy, other, MLP_CALL.places)


def test_every_recording_names_the_files_it_ran():
    for meta in sorted(RECORDINGS.rglob("*.json")):
        assert json.loads(meta.read_text())["sources"], meta
        if meta.parent.name != "bare":  # a bare run's recording is its one file
            assert archive_file(meta.with_suffix("")).exists(), meta
