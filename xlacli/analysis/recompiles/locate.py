"""From torch_xla's frames to the user's line, keeping the library frame.

torch_xla's IR records only the innermost frame of each node, by file base
name (``forward@linear.py:134``). The HLO's metadata of the same graph has the
full path of that frame; the sync's frames have full paths all the way to
the user's code. A node inside a library is traced to the user's code
through the nodes that consume it, else through the sync's frames, else to
the function the step ran.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from xlacli.analysis.recompiles.ir_index import consumers, first_at_line, node_ordinals, per_graph
from xlacli.hlo.model import HloModule, Metadata
from xlacli.parse.frames import (
    CodeRoots,
    FirstUserFrames,
    Frame,
    base_name,
    first_user_frame,
    framework_frame,
    outside_xlacli,
)
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.ir_dump import IrGraph, IrNode

# A graph's callers of one library line's ops: one per run of equal callers,
# the first found, whether it is the only one.
_Callers = tuple[list[Frame | None], Frame, bool]

# The function of xlacli's harness that moves a batch to the device.
HARNESS_TRANSFER = ("to_device", "steps.py")


@dataclass
class Locator:
    """Resolves frames to display locations ``file:line``: (user, library)."""

    roots: CodeRoots
    model_dir: Path
    load_hlo: Callable[[str], HloModule | None]
    entry_site: str | None = None  # where the step's own code is defined
    inputs_site: str | None = None  # where get_inputs is defined
    known_files: dict[str, set[str]] = field(default_factory=dict)  # base name -> paths
    # Each graph's HLO ops with their whole Python stacks (None: not dumped).
    load_stacks: Callable[[str], list[StackedOp] | None] = lambda _hash: None
    _sources: dict[str, dict[tuple[str, int], str]] = field(default_factory=dict, repr=False)
    # Per IR graph (by id, see ir_index.per_graph): each node's consumers, each node's
    # ordinal among the nodes of its op and line, the first node at each line;
    # per graph hash, the callers of its HLO ops by op and line.
    _users: dict[int, tuple[IrGraph, dict[int, list[IrNode]]]] = field(
        default_factory=dict, repr=False
    )
    _ordinal: dict[int, tuple[IrGraph, dict[IrNode, int]]] = field(default_factory=dict, repr=False)
    _by_line: dict[int, tuple[IrGraph, dict[tuple[str, int], IrNode]]] = field(
        default_factory=dict, repr=False
    )
    _runs: dict[str, dict[tuple[str, str, int], _Callers]] = field(default_factory=dict, repr=False)
    # The user's functions that sync the device themselves, each with the line
    # that called it: (file, function, caller's file:line or None).
    _syncing: set[tuple[str, str, str | None]] = field(default_factory=set, repr=False)

    def learn_frames(self, frames: Iterable[Frame]) -> None:
        """Remember full paths seen in sync frames, to resolve base names, and
        which of the user's functions sync (``outer_user_line``)."""
        frames = tuple(frames)
        for frame in frames:
            self.known_files.setdefault(base_name(frame.file), set()).add(frame.file)
        users = [index for index, frame in enumerate(frames) if self.roots.is_user(frame)]
        # A sync the user's function called (inside its frame); not a step
        # closure's read, which a sync runs from outside the user's frames.
        if users and any(_is_sync_call(frame) for frame in frames[: users[0]]):
            inner = frames[users[0]]
            caller = frames[users[1]].location if len(users) > 1 else None
            self._syncing.add((inner.file, inner.function, caller))

    def trigger(self, frames: tuple[Frame, ...]) -> tuple[str | None, str | None]:
        """The user's frame of a sync, and the library frame it went through."""
        user = first_user_frame(frames, self.roots)
        innermost = next((f for f in frames if not self.roots.is_xlacli(f)), None)
        library = innermost if innermost is not None and innermost != user else None
        # One call into a framework (trainer.train()): its own line is the site.
        library = framework_frame(frames, self.roots) or library
        if library is not None and _is_torch_xla_sync(library):
            library = None
        return (_show(user) if user else self.entry_site), (_show(library) if library else None)

    def outer_user_line(self, frames: tuple[Frame, ...]) -> str | None:
        """The user's line that called the function of the innermost user frame
        (a helper's caller), if the user's code has one. Not when that function
        syncs the device itself (its loop is the steps: ``main()`` called from
        the module's last line led to every graph, not to this read)."""
        users = [frame for frame in frames if self.roots.is_user(frame)]
        if len(users) < 2:
            return None
        if (users[0].file, users[0].function, users[1].location) in self._syncing:
            return None
        return _show(users[1])

    def node(self, node: IrNode, graph: _HasIr) -> tuple[str | None, str | None]:
        """The user's line behind an IR node, and the library line if it is inside one."""
        frame = self._resolve(node.location, graph.graph_hash) if node.location else None
        if frame is not None and self.roots.is_user(frame):
            return _show(frame), None
        library = outside_xlacli(_show(frame)) if frame is not None else None
        if node.location is None:  # made by the autograd engine, outside Python
            backward = self._backward_call(graph)
            if backward is not None:
                return backward, None
        caller = self._caller(node, graph)
        user = caller or self._user_consumer(node, graph) or self.trigger(graph.frames)[0]
        return user, library

    def _backward_call(self, graph: _HasIr) -> str | None:
        """The user's ``loss.backward()`` line, from the stack of an op it made in Python."""
        for op in self.load_stacks(graph.graph_hash) or ():
            if any(_is_backward(frame) for frame in op.stack):
                user = first_user_frame(op.stack, self.roots)
                if user is not None:
                    return _show(user)
        return None

    def _caller(self, node: IrNode, graph: _HasIr) -> str | None:
        """The user's line that called into the library where ``node`` was made,
        from the node's whole stack in the graph's HLO protobuf."""
        if node.location is None or graph.ir is None:
            return None
        # The IR and its lowering share one order: the k-th node with this op
        # and line is the k-th run of HLO instructions with them.
        ordinal = per_graph(self._ordinal, graph.ir, node_ordinals).get(node)
        if ordinal is None:
            return None  # a node of another graph has no stacks here
        key = (node.op, node.location.file, node.location.line)
        callers = self._callers(graph.graph_hash).get(key)
        if callers is None:
            return None
        runs, first, only = callers
        if only or len(runs) <= ordinal:
            return _show(first)
        chosen = runs[ordinal]
        return _show(chosen) if chosen is not None else _show(first)

    def metadata(self, metadata: Metadata, graph: _HasIr) -> tuple[str | None, str | None]:
        """Like ``node`` for an HLO instruction's metadata (full path already)."""
        if not metadata.source_file:
            return self.trigger(graph.frames)[0], None
        frame = Frame(metadata.op_name, metadata.source_file, metadata.source_line)
        if self.roots.is_user(frame):
            return _show(frame), None
        node = self._ir_node_at(graph.ir, frame)
        traced = (self._caller(node, graph) or self._user_consumer(node, graph)) if node else None
        return traced or self.trigger(graph.frames)[0], _show(frame)

    def is_harness(self, node: IrNode) -> bool:
        """Whether a device-data node is a batch xlacli moved to the device."""
        location = node.location
        return location is not None and (location.function, location.file) == HARNESS_TRANSFER

    def _resolve(self, location: Frame, graph_hash: str) -> Frame | None:
        """The full path of an IR location (which names only the file's base name)."""
        base = location.file
        source = self._hlo_sources(graph_hash).get((base, location.line))
        if source is not None:
            return Frame(location.function, source, location.line)
        candidates = sorted(self.known_files.get(base, ()))
        if not candidates and (self.model_dir / base).is_file():
            candidates = [str((self.model_dir / base).resolve())]
        if len(candidates) == 1:
            return Frame(location.function, candidates[0], location.line)
        return None

    def _hlo_sources(self, graph_hash: str) -> dict[tuple[str, int], str]:
        """``(base name, line) -> full path`` from a graph's HLO metadata."""
        if graph_hash not in self._sources:
            index: dict[tuple[str, int], str] = {}
            hlo = self.load_hlo(graph_hash)
            for computation in hlo.computations if hlo else ():
                for instruction in computation.instructions:
                    metadata = instruction.metadata
                    if metadata.source_file:
                        key = (base_name(metadata.source_file), metadata.source_line)
                        index.setdefault(key, metadata.source_file)
            self._sources[graph_hash] = index
        return self._sources[graph_hash]

    def _user_consumer(self, start: IrNode, graph: _HasIr) -> str | None:
        """The first node downstream of ``start`` whose line is in the user's code."""
        if graph.ir is None:
            return None
        users = per_graph(self._users, graph.ir, consumers)
        queue, seen = deque([start]), {start.id}
        while queue:
            for consumer in users.get(queue.popleft().id, ()):
                if consumer.id in seen:
                    continue
                seen.add(consumer.id)
                frame = (
                    self._resolve(consumer.location, graph.graph_hash)
                    if consumer.location
                    else None
                )
                if frame is not None and self.roots.is_user(frame):
                    return _show(frame)
                queue.append(consumer)
        return None

    def _callers(self, graph_hash: str) -> dict[tuple[str, str, int], _Callers]:
        """Per (op, file base name, line) of a graph's HLO ops: the user frames
        that called them, one per run of equal callers in the module's order,
        the first found and whether it is the only one (keys with none left out)."""
        if graph_hash not in self._runs:
            runs: dict[tuple[str, str, int], list[Frame | None]] = {}
            user_frame = FirstUserFrames(self.roots)
            for op in self.load_stacks(graph_hash) or ():
                if op.stack:
                    key = (op.ir_op, base_name(op.stack[0].file), op.stack[0].line)
                    caller = user_frame(op.stack)
                    frames = runs.setdefault(key, [])
                    if not frames or frames[-1] != caller:
                        frames.append(caller)
            callers = {}
            for key, frames in runs.items():
                found = {frame for frame in frames if frame is not None}
                if found:
                    first = next(frame for frame in frames if frame is not None)
                    callers[key] = (frames, first, len(found) == 1)
            self._runs[graph_hash] = callers
        return self._runs[graph_hash]

    def _ir_node_at(self, ir: IrGraph | None, frame: Frame) -> IrNode | None:
        """The first node of ``ir`` made at ``frame``'s file (base name) and line."""
        if ir is None:
            return None
        return per_graph(self._by_line, ir, first_at_line).get((base_name(frame.file), frame.line))


class _HasIr(Protocol):
    """What the locator reads of a compiled graph (``CompiledGraph`` has these)."""

    @property
    def graph_hash(self) -> str: ...
    @property
    def frames(self) -> tuple[Frame, ...]: ...
    @property
    def ir(self) -> IrGraph | None: ...


def _show(frame: Frame) -> str:
    """Locations are kept absolute in the report; renderers shorten them."""
    return f"{frame.file}:{frame.line}"


def _is_backward(frame: Frame) -> bool:
    return frame.function == "backward" and frame.file.endswith(
        ("torch/_tensor.py", "torch/autograd/__init__.py")
    )


# torch_xla's calls that sync the device (a step's end): torch_xla.sync,
# xm.mark_step, xm.optimizer_step(barrier=True), an MpDeviceLoader's next batch.
_SYNC_CALLS = (
    ("sync", "torch_xla/torch_xla.py"),
    ("mark_step", "torch_xla/core/xla_model.py"),
    ("optimizer_step", "torch_xla/core/xla_model.py"),
)


def _is_sync_call(frame: Frame) -> bool:
    if frame.file.endswith("torch_xla/distributed/parallel_loader.py"):
        return True
    return any(frame.function == name and frame.file.endswith(file) for name, file in _SYNC_CALLS)


def _is_torch_xla_sync(frame: Frame) -> bool:
    return frame.function == "sync" and frame.file.endswith("torch_xla/torch_xla.py")
