"""Where XLA writes its dump during a capture: a RAM-backed folder when there is one.

Besides the HLO xlacli keeps, XLA:CPU writes the LLVM IR, MLIR and object
code of every kernel at each compile (about 900 files for the 4 graphs of
``examples/scripts/train_cnn.py``), and no flag turns that off without
turning off the HLO dump too. Creating those files on disk cost 0.5 s of a
7 s run here (7%); in ``/dev/shm`` nothing measurable (docs/performance.md).
So the child dumps into a staging folder there and, once it has ended, the
parent copies the kept files (``parse/xla_dump.py``'s roles) into the run's
``raw/xla-dump`` and drops the rest: a child killed by a signal or the hang
watchdog loses nothing, since the parent copies them after it is gone. Only a
parent killed by SIGKILL leaves a staging folder behind; the next capture
removes it (its name holds the dead parent's pid).

No staging where there is no ``/dev/shm``, too little room in it, or
``XLACLI_DUMP_STAGING=off``: XLA then writes into the run folder directly.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from xlacli.capture.ranks import RANK_FOLDER_PREFIX
from xlacli.parse.xla_dump import classify_dump_file
from xlacli.run_folder.request import RunPaths

STAGING_SETTING = "XLACLI_DUMP_STAGING"  # "off", or a folder to stage in
_DEFAULT_ROOT = Path("/dev/shm")
_MIN_FREE_BYTES = 1 << 30  # a large model's dump must fit beside everything else in RAM
_PREFIX = "xlacli-dump-"
_MAIN = "xla-dump"


class DumpStage:
    """A staging folder: the main process's dump and one per followed rank."""

    def __init__(self, root: Path):
        self.root = root

    @property
    def main(self) -> Path:
        return self.root / _MAIN

    def rank(self, rank_name: str) -> Path:
        """The dump folder of ``RUN/<rank_name>`` (``rank_name`` may hold a placeholder)."""
        return self.root / rank_name

    def harvest(self, paths: RunPaths) -> None:
        """Copy the kept files into the run folder (and its rank folders); drop the rest."""
        keep_dump_files(self.main, paths.xla_dump)
        for folder in sorted(self.root.glob(f"{RANK_FOLDER_PREFIX}*")):
            keep_dump_files(folder, RunPaths(paths.root / folder.name).xla_dump)
        shutil.rmtree(self.root, ignore_errors=True)


def keep_dump_files(source: Path, target: Path) -> int:
    """Copy the dump files xlacli keeps from ``source`` to ``target`` (those not
    copied already while the child ran: ``assemble/dump_prefetch.py``); how many."""
    if not source.is_dir():
        return 0
    target.mkdir(parents=True, exist_ok=True)
    moved = 0
    for path in source.iterdir():
        if classify_dump_file(path.name) is not None and not _copied(path, target / path.name):
            moved += copy_kept_file(path, target) is not None
    return moved


def copy_kept_file(path: Path, target: Path) -> bytes | None:
    """Copy one dump file into the existing folder ``target``; its bytes (None:
    unreadable).

    Bytes, not shutil.move: across file systems that is a failed rename and a
    copy of metadata xlacli never reads (5x the time: 0.3 ms a file, ~6 files
    a graph). The staging folder goes whole.
    """
    try:
        data = path.read_bytes()
        (target / path.name).write_bytes(data)
    except OSError:
        return None
    return data


def _copied(source: Path, copy: Path) -> bool:
    """``copy`` was written from ``source`` as it is now (XLA writes a dump file
    once; a copy taken while it was being written is shorter or older)."""
    try:
        source_stat, copy_stat = source.stat(), copy.stat()
    except OSError:
        return False
    return (
        copy_stat.st_size == source_stat.st_size
        and copy_stat.st_mtime_ns >= source_stat.st_mtime_ns
    )


@contextlib.contextmanager
def dump_stage(
    environ: dict[str, str] | os._Environ[str] = os.environ,
) -> Iterator[DumpStage | None]:
    """A fresh staging folder for one capture (None: stage nothing), removed afterwards
    by ``DumpStage.harvest`` or, if harvesting never ran, here."""
    root = staging_root(environ)
    if root is None:
        yield None
        return
    _remove_orphans(root)
    try:
        folder = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=root))
    except OSError:
        yield None
        return
    try:
        yield DumpStage(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def staging_root(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path | None:
    """The RAM-backed folder to stage dumps in, or None."""
    setting = environ.get(STAGING_SETTING, "").strip()
    if setting.lower() in {"off", "0", "no", "false"}:
        return None
    root = Path(setting) if setting else _DEFAULT_ROOT
    try:
        stats = os.statvfs(root)
    except OSError:
        return None
    if not os.access(root, os.W_OK) or stats.f_bavail * stats.f_frsize < _MIN_FREE_BYTES:
        return None
    return root


def _remove_orphans(root: Path) -> None:
    """Staging folders whose parent died without harvesting (SIGKILL)."""
    for folder in root.glob(f"{_PREFIX}*"):
        pid_text = folder.name[len(_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and not _alive(int(pid_text)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True
