"""The test process's debug switches and the folder torch_xla dumps into.

The plugin runs in the test's own process, so it cannot start a child with
the right environment as ``xlacli compile`` does: it sets the same switches
(``capture/env.py``: IR locations, HLO debug, the PT_XLA_DEBUG log, XLA's
dumps) in ``os.environ`` before torch_xla is imported, once per process. Each
process (an xdist worker too) has its own folder; each measured test takes
the files written while it ran into a run folder of its own.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.abc import MetaPathFinder
from pathlib import Path
from types import ModuleType
from typing import Any

from xlacli.capture.env import capture_environment, is_flag_safe
from xlacli.run_folder.request import CaptureRequest, RunPaths

# What capture_environment sets that torch_xla reads; PJRT_DEVICE and
# PYTHONUNBUFFERED stay the user's business in their own test process.
DEBUG_SWITCHES = (
    "XLA_IR_DEBUG",
    "XLA_HLO_DEBUG",
    "PT_XLA_DEBUG_LEVEL",
    "PT_XLA_DEBUG_FILE",
    "PT_XLA_DEBUG_MAX_FRAME",
    "XLA_FLAGS",
    "XLA_SAVE_TENSORS_FILE",
    "XLA_SAVE_TENSORS_FMT",
)


def debug_switches(base: Mapping[str, str], paths: RunPaths) -> dict[str, str]:
    """The switches ``xlacli compile`` gives its child, for a process dumping into ``paths``."""
    request = CaptureRequest(model_path="", model_entry=None, steps=0)
    env = {**capture_environment(base, request, paths), **paths.native_ir_dump_environment()}
    return {name: env[name] for name in DEBUG_SWITCHES}


@dataclass
class SessionDumps:
    """One process's dump folder, armed before torch_xla is imported."""

    paths: RunPaths
    previous: dict[str, str | None]

    @classmethod
    def arm(cls) -> SessionDumps:
        """Create the folder and set the debug switches in ``os.environ``."""
        root = Path(tempfile.mkdtemp(prefix=f"xlacli-pytest-{_worker()}-", dir=_flag_safe_tmp()))
        paths = RunPaths(root)
        paths.raw.mkdir()
        switches = debug_switches(os.environ, paths)
        previous = {name: os.environ.get(name) for name in switches}
        os.environ.update(switches)
        return cls(paths, previous)

    def disarm(self) -> None:
        """Put the environment back and remove the folder (failures were moved out)."""
        for name, value in self.previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(self.paths.root, ignore_errors=True)

    def clear(self) -> None:
        """Forget what earlier tests wrote. torch_xla opens its log files in
        append mode at every write, so truncating them is safe between tests."""
        for path in (self.paths.debug_log, *self.paths.ir_dump_files()):
            with contextlib.suppress(OSError):
                path.write_bytes(b"")
        shutil.rmtree(self.paths.xla_dump, ignore_errors=True)
        self.paths.xla_dump.mkdir(parents=True, exist_ok=True)

    def take(self, run: RunPaths, *, move: bool) -> None:
        """Copy (or move, at the end of a test) the raw files into ``run``."""
        run.raw.mkdir(parents=True, exist_ok=True)
        sources = [self.paths.debug_log, *self.paths.ir_dump_files(), self.paths.xla_dump]
        for source in sources:
            if not source.exists():
                continue
            target = run.raw / source.name
            if move:
                shutil.move(str(source), target)
            elif source.is_dir():
                shutil.copytree(source, target)
            else:
                shutil.copyfile(source, target)
        if move:
            self.paths.xla_dump.mkdir(parents=True, exist_ok=True)


def _worker() -> str:
    """``gw0``... under pytest-xdist, else ``main``."""
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


def _flag_safe_tmp() -> str:
    """A temporary folder XLA_FLAGS can carry (no space in its path)."""
    base = tempfile.gettempdir()
    return base if is_flag_safe(Path(base)) else "/tmp"


class ImportWatch(MetaPathFinder):
    """Notes who imports torch_xla first, so a "too late" message can name it.

    It never finds a module itself, and leaves ``sys.meta_path`` at the
    first import of torch_xla.
    """

    def __init__(self) -> None:
        self.importer: str | None = None

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> None:
        if fullname == "torch_xla":
            self.importer = _importing_line()
            self.remove()
        return None

    def install(self) -> None:
        if "torch_xla" not in sys.modules and self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def remove(self) -> None:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


def _importing_line() -> str | None:
    """The innermost frame outside the import machinery: the ``import torch_xla`` line."""
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith("<frozen") and "importlib" not in name and name != __file__:
            return f"{name}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return None
