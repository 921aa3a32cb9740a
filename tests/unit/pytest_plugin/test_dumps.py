"""The test process's debug switches: the same as xlacli compile's child, set and put back."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from xlacli.capture.env import capture_environment
from xlacli.pytest_plugin.dumps import DEBUG_SWITCHES, ImportWatch, SessionDumps, debug_switches
from xlacli.run_folder.request import CaptureRequest, RunPaths


def test_switches_are_the_childs(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path)
    request = CaptureRequest(model_path="m.py", model_entry=None, steps=2)
    child = capture_environment({"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"}, request, paths)
    switches = debug_switches({"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"}, paths)
    # The child writes each new graph's IR itself; the test process has torch_xla's dump.
    native = paths.native_ir_dump_environment()
    assert switches == {name: {**child, **native}[name] for name in DEBUG_SWITCHES}
    long_run = CaptureRequest(model_path="m.py", model_entry=None, steps=1000)
    assert "XLA_SAVE_TENSORS_FILE" not in capture_environment({}, long_run, paths)
    assert switches["XLA_FLAGS"].startswith("--xla_cpu_use_thunk_runtime=false ")
    assert "PJRT_DEVICE" not in switches  # the user's own choice in their process


def test_arm_sets_and_disarm_restores(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setenv("XLA_FLAGS", "--xla_mine")
    monkeypatch.delenv("XLA_IR_DEBUG", raising=False)
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    dumps = SessionDumps.arm()
    try:
        assert dumps.paths.root.parent == tmp_path
        assert dumps.paths.root.name.startswith("xlacli-pytest-gw3-")
        assert os.environ["XLA_IR_DEBUG"] == "1"
        assert os.environ["PT_XLA_DEBUG_FILE"] == str(dumps.paths.debug_log)
    finally:
        dumps.disarm()
    assert "XLA_IR_DEBUG" not in os.environ
    assert os.environ["XLA_FLAGS"] == "--xla_mine"
    assert not dumps.paths.root.exists()


def test_clear_and_take(tmp_path: Path) -> None:
    dumps = SessionDumps(RunPaths(tmp_path / "session"), {})
    dumps.paths.xla_dump.mkdir(parents=True)
    dumps.paths.debug_log.write_text("Compilation Analysis: old\n")
    (dumps.paths.xla_dump / "module_0001.SyncTensorsGraph.3.before_optimizations.txt").write_text(
        "HloModule old"
    )
    dumps.clear()
    assert dumps.paths.debug_log.read_text() == ""  # truncated: torch_xla appends to it
    assert list(dumps.paths.xla_dump.iterdir()) == []

    dumps.paths.debug_log.write_text("Compilation Analysis: new\n")
    (dumps.paths.raw / "ir-dump.txt.0").write_text("[ir]")
    copy, moved = RunPaths(tmp_path / "copy"), RunPaths(tmp_path / "moved")
    dumps.take(copy, move=False)
    assert copy.debug_log.read_text() == "Compilation Analysis: new\n"
    assert dumps.paths.debug_log.exists()
    dumps.take(moved, move=True)
    assert [p.name for p in moved.ir_dump_files()] == ["ir-dump.txt.0"]
    assert not dumps.paths.debug_log.exists()
    assert dumps.paths.xla_dump.is_dir()  # XLA keeps dumping there


def test_import_watch_names_the_importing_line(monkeypatch: pytest.MonkeyPatch) -> None:
    watch = ImportWatch()
    monkeypatch.setattr(sys, "meta_path", [watch, *sys.meta_path])
    assert watch.find_spec("numpy", None) is None
    assert watch.importer is None and watch in sys.meta_path
    line = sys._getframe().f_lineno + 1
    assert watch.find_spec("torch_xla", None) is None
    assert watch.importer is not None
    assert watch.importer.endswith(f"test_dumps.py:{line}")
    assert watch not in sys.meta_path  # once is enough


@pytest.mark.parametrize(
    ("steps", "run_to_end", "per_sync"),
    [(5, False, True), (60, False, False), (0, True, False)],
)
def test_torch_xlas_per_sync_dump_only_for_runs_of_known_short_length(
    tmp_path: Path, steps: int, run_to_end: bool, per_sync: bool
) -> None:
    """A script run to its end has the child write each graph's IR once (a large
    graph's IR printed at every sync cost ~0.5 s a step); the child sets the
    per-sync dump itself if eager mode comes on before its first graph."""
    request = CaptureRequest("t.py", None, steps, target_kind="script", run_to_end=run_to_end)
    env = capture_environment({}, request, RunPaths(tmp_path))
    assert request.ir_per_sync is per_sync
    assert ("XLA_SAVE_TENSORS_FILE" in env) is per_sync
