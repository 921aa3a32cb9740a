"""The files XLA writes under ``--xla_dump_to``.

Each compiled module gets files named
``module_<NNNN>.<module name>.<stage>.txt``; ``NNNN`` is the module's unique
id, which grows with every compile, so sorting by it gives compile order.
The CPU backend also writes LLVM IR, MLIR and object files per fused kernel:
noise for a PyTorch user, dropped by ``prune_backend_noise``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

_MODULE_FILE = re.compile(r"^module_(?P<id>\d+)\.(?P<rest>.+)$")
# The files we keep, most specific first. The optimized module is
# "<platform>_after_optimizations" on CPU and GPU (with the compute capability
# first on CUDA: "sm_8.0_gpu_"), plain "after_optimizations" elsewhere.
_OPTIMIZED = r"(?:(?:sm_[\d.]+_)?[a-z]+_)?after_optimizations"
_ROLES = (
    ("buffer_assignment", re.compile(rf"^(?P<name>.+?)\.{_OPTIMIZED}-buffer-assignment\.txt$")),
    ("memory_usage", re.compile(rf"^(?P<name>.+?)\.{_OPTIMIZED}-memory-usage-report\.txt$")),
    ("hlo_after", re.compile(rf"^(?P<name>.+?)\.{_OPTIMIZED}\.txt$")),
    ("hlo_before", re.compile(r"^(?P<name>.+?)\.before_optimizations\.txt$")),
    # The same module as a protobuf: it alone keeps each op's whole Python stack.
    ("hlo_stacks", re.compile(r"^(?P<name>.+?)\.before_optimizations\.hlo\.pb$")),
    ("hlo_after_stacks", re.compile(rf"^(?P<name>.+?)\.{_OPTIMIZED}\.hlo\.pb$")),
)


@dataclass
class DumpedModule:
    """The kept files of one compiled module, by role."""

    module_id: int
    name: str
    files: dict[str, Path] = field(default_factory=dict)


def list_dumped_modules(dump_dir: Path) -> list[DumpedModule]:
    """The modules of an XLA dump folder, in compile order."""
    modules: dict[int, DumpedModule] = {}
    if not dump_dir.is_dir():
        return []
    for path in dump_dir.iterdir():
        classified = classify_dump_file(path.name)
        if classified is None:
            continue
        module_id, name, role = classified
        module = modules.setdefault(module_id, DumpedModule(module_id, name))
        module.files[role] = path
    return [modules[key] for key in sorted(modules)]


def classify_dump_file(filename: str) -> tuple[int, str, str] | None:
    """``(module id, module name, role)`` of a kept dump file, else None."""
    match = _MODULE_FILE.match(filename)
    if match is None:
        return None
    for role, pattern in _ROLES:
        role_match = pattern.match(match["rest"])
        if role_match:
            return int(match["id"]), role_match["name"], role
    return None


def prune_backend_noise(dump_dir: Path) -> list[Path]:
    """Delete the dump files xlacli does not keep (LLVM, MLIR, objects...)."""
    removed = []
    for path in _iter_files(dump_dir):
        if classify_dump_file(path.name) is None:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _iter_files(folder: Path) -> Iterable[Path]:
    return (path for path in folder.iterdir() if path.is_file()) if folder.is_dir() else ()
