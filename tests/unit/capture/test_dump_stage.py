"""The XLA dump's staging folder (capture/dump_stage.py): what is kept, what
is dropped, when there is no staging, and what a killed parent leaves."""

from __future__ import annotations

import os
import subprocess
import sys

from xlacli.capture.dump_stage import STAGING_SETTING, dump_stage, keep_dump_files, staging_root
from xlacli.run_folder.request import RunPaths

KEPT = (
    "module_0001.SyncTensorsGraph.5.before_optimizations.txt",
    "module_0001.SyncTensorsGraph.5.cpu_after_optimizations.txt",
    "module_0001.SyncTensorsGraph.5.cpu_after_optimizations-buffer-assignment.txt",
    "module_0001.SyncTensorsGraph.5.before_optimizations.hlo.pb",
)
DROPPED = (
    "module_0001.SyncTensorsGraph.5.add_fusion.1_kernel_module.ir-no-opt.ll",
    "module_0001.SyncTensorsGraph.5.add_fusion.1_kernel_module-post-lowering.mlir",
    "module_0001.SyncTensorsGraph.5.obj-file.add_fusion.1_kernel_module.o",
)


def _write(folder, names):
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text(name)


def test_harvest_moves_the_kept_files_and_drops_the_rest(tmp_path):
    paths = RunPaths(tmp_path / "run")
    env = {STAGING_SETTING: str(tmp_path / "ram")}
    (tmp_path / "ram").mkdir()
    with dump_stage(env) as stage:
        assert stage is not None and stage.root.parent == tmp_path / "ram"
        _write(stage.main, KEPT + DROPPED)
        _write(stage.rank("rank-1"), KEPT[:1] + DROPPED[:1])
        stage.harvest(paths)
    assert sorted(p.name for p in paths.xla_dump.iterdir()) == sorted(KEPT)
    assert (paths.xla_dump / KEPT[0]).read_text() == KEPT[0]
    rank = RunPaths(paths.root / "rank-1").xla_dump
    assert [p.name for p in rank.iterdir()] == [KEPT[0]]
    assert list((tmp_path / "ram").iterdir()) == []


def test_a_stage_never_harvested_is_removed_all_the_same(tmp_path):
    (tmp_path / "ram").mkdir()
    with dump_stage({STAGING_SETTING: str(tmp_path / "ram")}) as stage:
        assert stage is not None
        _write(stage.main, DROPPED)
    assert list((tmp_path / "ram").iterdir()) == []


def test_no_staging_when_switched_off_missing_or_unwritable(tmp_path):
    assert staging_root({STAGING_SETTING: "off"}) is None
    assert staging_root({STAGING_SETTING: str(tmp_path / "absent")}) is None
    with dump_stage({STAGING_SETTING: "off"}) as stage:
        assert stage is None


def test_keep_dump_files_from_a_missing_folder_moves_nothing(tmp_path):
    assert keep_dump_files(tmp_path / "absent", tmp_path / "target") == 0


def test_a_dead_parents_stage_is_removed_by_the_next_capture(tmp_path):
    ram = tmp_path / "ram"
    ram.mkdir()
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    orphan = ram / f"xlacli-dump-{dead.stdout.strip()}-abc"
    _write(orphan / "xla-dump", DROPPED)
    alive = ram / f"xlacli-dump-{os.getpid()}-def"  # a capture still running
    alive.mkdir()
    with dump_stage({STAGING_SETTING: str(ram)}):
        pass
    assert not orphan.exists() and alive.exists()
