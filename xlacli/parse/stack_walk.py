"""The user's line behind an HLO op's library line, for every view.

HLO metadata names an op's innermost frame, often inside a library
(``torch/nn/modules/linear.py:134``). The HLO protobufs torch_xla writes
(``hlo.before.pb``, ``hlo.after.pb``) keep each op's whole Python stack, so the
op's line can be walked out of the libraries to the user's call, as the
recompile explanations do: ``model.py:12 (inside torch/nn/modules/linear.py:134)``.

An op is found by its instruction's name when the protobuf of the same module
holds it (its own stack: three layers' ``linear.py:134`` each at its layer's
line). Otherwise its library line is walked when every op there was reached
from one user line; a line reached from several (or from none: xlacli's own
harness moving the weights) stays the library's rather than name the wrong one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from xlacli.parse.frames import CodeRoots, FirstUserFrames
from xlacli.parse.hlo_stacks import StackedOp, read_hlo_stacks


@dataclass(frozen=True)
class Walked:
    """An op's line as the user reads it, and the library line it went through."""

    user: str  # ``/abs/model.py:12``
    library: str  # ``/abs/site-packages/torch/nn/modules/linear.py:134``


@dataclass(frozen=True)
class LineWalk:
    """The walks one module's stacks allow: by instruction name, by library line."""

    by_name: dict[str, Walked] = field(default_factory=dict)
    by_library: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.by_name or self.by_library)

    def walk(self, location: str | None, name: str = "") -> Walked | None:
        """Where the op ``name`` whose metadata names ``location`` was called from
        in the user's code; None when ``location`` is the user's own, or unknown."""
        if not location:
            return None
        own = self.by_name.get(name) if name else None
        if own is not None and own.library == location:
            return own
        user = self.by_library.get(location)
        return Walked(user, location) if user is not None else None

    def with_libraries_of(self, other: LineWalk) -> LineWalk:
        """Also walk the library lines ``other`` walks (another stage of the same
        graph); its names are another module's and are left out. A library line
        the two walk to different user lines is walked by neither."""
        by_library = {**other.by_library, **self.by_library}
        for library, user in other.by_library.items():
            if self.by_library.get(library, user) != user:
                del by_library[library]
        return LineWalk(self.by_name, by_library)


def line_walk(stacks: Iterable[StackedOp] | None, roots: CodeRoots) -> LineWalk:
    """The walks of one module's stacked ops (``parse/hlo_stacks.py``)."""
    by_name: dict[str, Walked] = {}
    users: dict[str, set[str]] = {}
    user_frame = FirstUserFrames(roots)
    for op in stacks or ():
        if not op.stack or roots.is_user(op.stack[0]):
            continue
        user = user_frame(op.stack)
        if user is None:
            continue
        library = op.stack[0].location
        if op.name:
            by_name[op.name] = Walked(user.location, library)
        users.setdefault(library, set()).add(user.location)
    unique = {library: found.pop() for library, found in users.items() if len(found) == 1}
    return LineWalk(by_name, unique)


def file_walk(own: Path | None, roots: CodeRoots, others: Iterable[Path | None] = ()) -> LineWalk:
    """The walks of the protobuf of the module itself (``own``: names and library
    lines) and of its other stages (``others``: library lines only); a missing
    or unreadable file adds none."""
    walk = line_walk(read_hlo_stacks(own), roots) if own is not None else LineWalk()
    for path in others:
        if path is not None:
            walk = walk.with_libraries_of(line_walk(read_hlo_stacks(path), roots))
    return walk


def text_walk(hlo_text: Path, roots: CodeRoots) -> LineWalk:
    """The walks of an HLO text file, from the protobufs dumped beside it: its
    own (``hlo.after.txt`` -> ``hlo.after.pb``) and its module's other stage."""
    own, others = _stacks_beside(hlo_text)
    return file_walk(own, roots, others)


# A run folder's graph files (assemble/graph_files.py), and an --xla_dump_to module's.
_RUN_GRAPH_TEXTS = {"hlo.before.txt": "hlo.before.pb", "hlo.after.txt": "hlo.after.pb"}
_DUMPED_MODULE = re.compile(r"^module_\d+\.")


def _stacks_beside(hlo_text: Path) -> tuple[Path | None, list[Path]]:
    """The protobuf of the same module and stage, and those of its other stages."""
    name = hlo_text.name
    if name in _RUN_GRAPH_TEXTS:
        own = hlo_text.with_name(_RUN_GRAPH_TEXTS[name])
        stages = [hlo_text.with_name(pb) for pb in _RUN_GRAPH_TEXTS.values()]
    elif (module := _DUMPED_MODULE.match(name)) is not None:
        # module_0003.SyncTensorsGraph.12.before_optimizations.txt -> ...hlo.pb
        own = hlo_text.with_name(name.removesuffix(".txt") + ".hlo.pb")
        stages = sorted(hlo_text.parent.glob(f"{module.group(0)}*.hlo.pb"))
    else:
        own = hlo_text.with_suffix(".pb")
        stages = []
    found = own if own.is_file() else None
    return found, [path for path in stages if path != own and path.is_file()]


class SourceWalk(Protocol):
    """What walks an op's library line to the user's: a ``LineWalk`` or a ``DeferredWalk``."""

    def walk(self, location: str | None, name: str = "") -> Walked | None: ...


class DeferredWalk:
    """A walk read from its protobufs on first use: a diff of identical modules,
    or of ops all at the user's own lines, never reads them."""

    def __init__(self, load: Callable[[], LineWalk]) -> None:
        self._load = load
        self._loaded: LineWalk | None = None

    def walk(self, location: str | None, name: str = "") -> Walked | None:
        if not location:
            return None
        if self._loaded is None:
            self._loaded = self._load()
        return self._loaded.walk(location, name)
