"""The graphs' dump files read while the child still runs (parent process).

Parsing each new graph's HLO (before and after optimization) and its two
protobufs once the child has ended cost about 6 ms a graph, on a core that
sat idle while the child compiled (docs/performance.md, issue 23). The
prefetcher watches the dump folder from the child's start: a kept file
(``parse/xla_dump.py``'s roles) that has not changed for a moment is copied
into the run folder and, when the report reads it, parsed. The report's
``HloCache`` asks here first, by the file's bytes, so a file the prefetcher
saw half written, or one it never saw, is parsed then as before: the report
is the same either way. The copy lets ``DumpStage.harvest`` skip the files
already there. The graphs' IR dump (``raw/ir-dump.txt.0``) is parsed a block
at a time as the child finishes writing each, and looked up the same way, by
the block's text.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from pathlib import Path

from xlacli.capture.dump_stage import copy_kept_file
from xlacli.errors import HloParseError, UsageError
from xlacli.hlo import parse_hlo_bytes
from xlacli.hlo.model import HloModule
from xlacli.parse.hlo_stacks import StackedOp, parse_hlo_stacks
from xlacli.parse.ir_dump import IR_BLOCK_END, IrGraph, parse_ir_blocks
from xlacli.parse.xla_dump import classify_dump_file

_TEXT_ROLES = {"hlo_before", "hlo_after"}
_STACK_ROLES = {"hlo_stacks", "hlo_after_stacks"}
# A file younger than this may still be being written: it waits for the next look.
_SETTLED_S = 0.2


def _key(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16).digest()


class DumpPrefetch:
    """Parsed dump files by content, filled by a thread while the child runs."""

    def __init__(self) -> None:
        self._modules: dict[bytes, HloModule] = {}
        self._stacks: dict[bytes, list[StackedOp]] = {}
        self._seen: dict[Path, tuple[int, int]] = {}  # file -> (size, mtime) when read
        # Names xlacli does not keep (XLA:CPU's LLVM and MLIR text of every
        # kernel, ~40 a graph): classified once, not at every look.
        self._ignored: set[str] = set()
        # The IR dump's blocks the child has finished writing, parsed; and how far
        # into the file they go (it only grows).
        self.ir_blocks: dict[str, IrGraph] = {}
        self._ir_read = 0

    def module(self, path: Path) -> HloModule | None:
        """The module parsed from ``path``'s bytes ahead of time, if any."""
        if not self._modules:
            return None
        try:
            module = self._modules.get(_key(path.read_bytes()))
        except OSError:
            return None
        return dataclasses.replace(module, filename=str(path)) if module else None

    def stacks(self, path: Path) -> list[StackedOp] | None:
        """The protobuf's stacked ops parsed ahead of time, if any."""
        if not self._stacks:
            return None
        try:
            return self._stacks.get(_key(path.read_bytes()))
        except OSError:
            return None

    def look(self, dump_dir: Path, copy_to: Path | None, now: float | None = None) -> None:
        """Copy (into ``copy_to``, if given) and parse the kept files that
        settled since the last look."""
        try:
            with os.scandir(dump_dir) as entries:
                names = [entry.name for entry in entries]
            if copy_to is not None:
                copy_to.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        now = time.time() if now is None else now
        for name in names:
            if name in self._ignored:
                continue
            classified = classify_dump_file(name)
            if classified is None:
                self._ignored.add(name)
                continue
            path = dump_dir / name
            try:
                stat = path.stat()
            except OSError:
                continue
            signature = (stat.st_size, stat.st_mtime_ns)
            if self._seen.get(path) == signature or now - stat.st_mtime < _SETTLED_S:
                continue
            self._seen[path] = signature
            data = copy_kept_file(path, copy_to) if copy_to is not None else _read(path)
            if data is not None:
                self._parse(classified[2], path, data)

    def look_ir(self, path: Path) -> None:
        """Parse the IR dump's blocks written whole since the last look
        (``child/graph_ir.py`` writes one block at a time; torch_xla's own dump a
        block a sync): each ends with its ``## END_GRAPH`` line."""
        try:
            with path.open("rb") as dump:
                dump.seek(self._ir_read)
                data = dump.read()
        except OSError:
            return
        last = data.rfind(IR_BLOCK_END.encode())
        cut = data.find(b"\n", last) if last >= 0 else -1
        if cut < 0:
            return
        self._ir_read += cut + 1
        try:
            self.ir_blocks.update(parse_ir_blocks(data[: cut + 1].decode("utf-8", "replace")))
        except (ValueError, IndexError):
            return  # parsed again (and its error reported) when the report reads it

    def _parse(self, role: str, path: Path, data: bytes) -> None:
        try:
            if role in _TEXT_ROLES:
                self._modules[_key(data)] = parse_hlo_bytes(data, str(path))
            elif role in _STACK_ROLES:
                self._stacks[_key(data)] = parse_hlo_stacks(data)
        except (OSError, HloParseError, UsageError, ValueError, IndexError, UnicodeDecodeError):
            return  # parsed again (and its error reported) when the report reads it


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
