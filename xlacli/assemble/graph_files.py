"""Each graph's kept files under ``graphs/<hash>/``, and what they say of its size."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from xlacli.analysis.advice.inputs import read_ir_nodes
from xlacli.assemble.dump_prefetch import DumpPrefetch
from xlacli.errors import HloParseError
from xlacli.hlo import parse_hlo_file
from xlacli.hlo.model import HloModule
from xlacli.parse.buffer_assignment import parse_buffer_assignment, summarize_buffers
from xlacli.parse.hlo_stacks import StackedOp, read_hlo_stacks
from xlacli.parse.ir_dump import IrGraph, IrNode
from xlacli.parse.xla_dump import DumpedModule
from xlacli.run_folder.request import RunPaths

GRAPH_FILE_NAMES = {
    "ir": "ir.txt",
    "hlo_before": "hlo.before.txt",
    "hlo_after": "hlo.after.txt",
    "buffer_assignment": "buffer-assignment.txt",
    "memory_usage": "memory-usage.txt",
    "hlo_stacks": "hlo.before.pb",
    "hlo_after_stacks": "hlo.after.pb",
}


def organize_graph_files(
    paths: RunPaths, graph_hash: str, ir_graph: IrGraph | None, module: DumpedModule | None
) -> dict[str, str]:
    """Move a compile's dump files (and write its IR) under ``graphs/<hash>/``.

    Returns the kept files by role, relative to the run folder.
    """
    folder = paths.graphs / graph_hash
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    if ir_graph is not None:
        (folder / GRAPH_FILE_NAMES["ir"]).write_text(_ir_file_text(ir_graph), encoding="utf-8")
        files["ir"] = f"graphs/{graph_hash}/{GRAPH_FILE_NAMES['ir']}"
    for role, source in module.files.items() if module else ():
        if source.exists():
            shutil.move(str(source), folder / GRAPH_FILE_NAMES[role])
    # Every kept file there, moved now or by an earlier organisation of the same
    # folder (a report rebuilt after xlacli stopped between the two).
    for role, name in GRAPH_FILE_NAMES.items():
        if role not in files and (folder / name).exists():
            files[role] = f"graphs/{graph_hash}/{name}"
    return dict(sorted(files.items()))


def _ir_file_text(graph: IrGraph) -> str:
    frames = "".join(f"  {frame}\n" for frame in graph.frames)
    return f"Frames:\n{frames}\nGraph Hash: {graph.graph_hash}\n\n{graph.ir_text}\n"


class HloCache:
    """Parsed HLO of a run's graphs, each file parsed once."""

    def __init__(self, root: Path, prefetched: DumpPrefetch | None = None):
        self._root = root
        self._prefetched = prefetched  # parsed while the child ran, by content
        self._modules: dict[Path, HloModule | None] = {}
        self._stacks: dict[Path, list[StackedOp] | None] = {}
        self._ir_nodes: dict[Path, tuple[IrNode, ...]] = {}

    def module(self, relative: str | None) -> HloModule | None:
        """The parsed module, or None if the file is missing or not valid HLO."""
        if relative is None:
            return None
        path = self._root / relative
        if path not in self._modules:
            early = self._prefetched.module(path) if self._prefetched else None
            try:
                self._modules[path] = early or parse_hlo_file(path)
            except (OSError, HloParseError):
                self._modules[path] = None
        return self._modules[path]

    def stacks(self, relative: str | None) -> list[StackedOp] | None:
        """The ops of a graph's ``hlo.before.pb`` with their Python stacks, read once."""
        if relative is None:
            return None
        path = self._root / relative
        if path not in self._stacks:
            early = self._prefetched.stacks(path) if self._prefetched else None
            self._stacks[path] = early if early is not None else read_hlo_stacks(path)
        return self._stacks[path]

    def remember_ir(self, relative: str, nodes: tuple[IrNode, ...]) -> None:
        """A graph's IR nodes as parsed from the dump its ``ir.txt`` was written from."""
        self._ir_nodes[self._root / relative] = nodes

    def ir_nodes(self, root: Path, relative: str | None) -> tuple[IrNode, ...]:
        """A graph's IR nodes, read once for all the advisors."""
        if relative is None:
            return ()
        path = root / relative
        if path not in self._ir_nodes:
            self._ir_nodes[path] = read_ir_nodes(root, relative)
        return self._ir_nodes[path]


def graph_sizes(root: Path, files: dict[str, str], hlo: HloCache) -> dict[str, Any]:
    """Instruction, fusion and byte counts of one graph, from its kept files."""
    sizes: dict[str, int | None] = dict.fromkeys(
        (
            "input_bytes",
            "output_bytes",
            "temp_bytes",
            "hlo_instructions",
            "optimized_hlo_instructions",
            "fusions",
        )
    )
    if "buffer_assignment" in files:
        text = (root / files["buffer_assignment"]).read_text(encoding="utf-8", errors="replace")
        summary = summarize_buffers(parse_buffer_assignment(text))
        sizes.update(
            input_bytes=summary.input_bytes,
            output_bytes=summary.output_bytes,
            temp_bytes=summary.temp_bytes,
        )
    before = hlo.module(files.get("hlo_before"))
    if before is not None:
        sizes["hlo_instructions"] = before.instruction_count
    after = hlo.module(files.get("hlo_after"))
    if after is not None:
        sizes["optimized_hlo_instructions"] = after.instruction_count
        sizes["fusions"] = after.opcode_counts()["fusion"]
    return sizes
