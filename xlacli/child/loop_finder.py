"""Which of a script's syncs are iterations of its training loop (child process).

A script syncs before its loop too: a wrapper that shards or flattens
parameters (an FSDP auto-wrap syncs once per wrapped module), a warm-up
forward. Those are the **setup** phase; ``--steps N`` counts loop iterations.
The loop is recognised at the first sync that ends an iteration of a loop's
machinery (an ``MpDeviceLoader`` iteration, ``xm.optimizer_step``, a profiler
``StepTrace``, a ``torch_xla.compile`` function's end), or at the script's own
``mark_step``/``sync`` at a line (with the same stack) that synced before:
that earlier sync was the loop's first iteration. After that, every sync is
a loop iteration.

Some of the machinery syncs *before* an iteration: a new ``MpDeviceLoader``
iterator syncs when it hands out its first batch, and a ``torch_xla.compile``
function syncs what is pending before it traces. Before the loop, what they
run is the setup's work (the model's initialisation, moved to the device),
so they do not start the loop: they are setup too.

A sync made by a library (FSDP's own ``torch_xla.sync()`` while it wraps)
recurs too, but is not the script's loop, so it never starts one.
"""

from __future__ import annotations

import sysconfig
import weakref
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from xlacli.parse.frames import CodeRoots, Frame

# (the file's path ending, function) of a frame that makes a sync a loop iteration
LOOP_MACHINERY = (
    ("torch_xla/distributed/parallel_loader.py", "next"),
    ("torch_xla/core/xla_model.py", "optimizer_step"),
    ("torch_xla/debug/profiler.py", "__exit__"),  # StepTrace
    ("torch_xla/torch_xla.py", "_compile"),  # a torch_xla.compile function's end
)
# Machinery that syncs before an iteration: a torch_xla.compile function's
# start; a loader's first batch (LOADER_NEXT on a loader not seen before).
OPENING_SYNCS = (("torch_xla/torch_xla.py", "_clear_pending_ops_before_compile"),)
LOADER_NEXT = LOOP_MACHINERY[0]
# The functions a script calls to sync, which call the step marker.
SYNC_FUNCTIONS = (
    ("torch_xla/torch_xla.py", "sync"),
    ("torch_xla/core/xla_model.py", "mark_step"),
)
# Decorators' wrappers between a script and the sync it called: torch_xla 2.9's
# ``xm.mark_step`` is ``@deprecated``, called through typing_extensions' ``wrapper``.
WRAPPERS = (("typing_extensions.py", "wrapper"),)
SETUP = "setup"
LOOP = "loop"
# A sync after the loop started at another place than the loop's own (an
# evaluation loop's, a framework's gather for metrics): not a training iteration.
OTHER = "other"
# Frames that are the machinery between a sync's place and the sync itself.
_MACHINERY_PATHS = ("/torch/", "/torch_xla/", "typing_extensions", "<frozen")

SyncSite = tuple[tuple[str, int], ...]
_STDLIB = sysconfig.get_paths()["stdlib"].replace("\\", "/") + "/"


@dataclass(frozen=True)
class SyncStack:
    """What a sync's stack says about the loop."""

    machinery: bool  # a loop's machinery made the sync
    opening: bool  # ... before an iteration (a new loader's first batch, a compile's start)
    user_site: SyncSite | None  # the script's own sync: its stack


@dataclass
class LoopFinder:
    """Tells setup syncs from loop iterations, one sync at a time."""

    roots: CodeRoots
    loop_start: int | None = None  # the first loop step (may be an earlier sync)
    iterations: int = 0
    _user_syncs: dict[SyncSite, int] = field(default_factory=dict)  # site -> its first step
    _loaders: weakref.WeakSet[Any] = field(default_factory=weakref.WeakSet)  # seen iterators
    # Where the loop's syncs happen: the innermost frame that is neither torch's,
    # torch_xla's nor the standard library's (the script's line, or a framework's:
    # a Trainer's training loop). None until the loop's first iteration.
    loop_place: tuple[str, int] | None = None
    last_place: tuple[str, int] | None = None  # the place of the sync just classified

    def classify(
        self,
        step: int,
        frame: FrameType | None,
        *,
        machinery: bool = False,
        trained: bool = True,
    ) -> str:
        """The phase of step ``step``, whose sync's stack starts at ``frame``
        (``machinery``: the step ended at a loop's machinery that is no sync,
        an optimizer step in eager mode; ``trained``: a backward pass ran in it,
        so it is an iteration wherever it synced, as a Trainer's logging sync
        ends its training step)."""
        if self.loop_start is None:
            stack = _read_stack(frame, self.roots, self._loaders)
            # machinery given: an optimizer step ended an eager-mode step.
            if machinery or (stack.machinery and not stack.opening):
                self.loop_start = step
            elif stack.user_site is not None and stack.user_site in self._user_syncs:
                # The same line synced before: that sync was the first iteration.
                self.loop_start = self._user_syncs[stack.user_site]
                self.iterations += 1
            else:
                if stack.user_site is not None and not stack.machinery:
                    self._user_syncs[stack.user_site] = step
                return SETUP
        place = self.last_place = sync_place(frame, self.roots)
        if self.loop_place is None:
            self.loop_place = place
        elif not trained and (
            (place is not None and place != self.loop_place)
            # A new epoch's loader syncs what is pending before its first batch
            # (an evaluation's leftovers): the loop's place, but no iteration.
            or _read_stack(frame, self.roots, self._loaders).opening
        ):
            return OTHER  # an evaluation's sync, a framework's gather: no iteration
        self.iterations += 1
        return LOOP

    def saw_empty_sync(self, frame: FrameType | None) -> None:
        """A sync that ran nothing (no step): a loader handing out its first batch
        with nothing pending is still no longer new."""
        if self.loop_start is None:
            _read_stack(frame, self.roots, self._loaders)


def sync_place(frame: FrameType | None, roots: CodeRoots) -> tuple[str, int] | None:
    """Where a sync happened: its innermost frame outside torch, torch_xla, xlacli
    and the standard library, as (file, line)."""
    while frame is not None:
        path = frame.f_code.co_filename.replace("\\", "/")
        machinery = any(part in path for part in _MACHINERY_PATHS) or path.startswith(roots.xlacli)
        standard = path.startswith(_STDLIB) and "-packages/" not in path
        if not machinery and not standard:
            return path, frame.f_lineno
        frame = frame.f_back
    return None


def _read_stack(
    frame: FrameType | None, roots: CodeRoots, loaders: weakref.WeakSet[Any]
) -> SyncStack:
    stack: list[tuple[str, int]] = []
    caller: Frame | None = None
    machinery = opening = False
    while frame is not None:
        code = frame.f_code
        path = code.co_filename.replace("\\", "/")
        if _matches(path, code.co_name, OPENING_SYNCS):
            opening = True
        elif _matches(path, code.co_name, (LOADER_NEXT,)):
            opening = opening or _first_batch(frame, loaders)
        if _matches(path, code.co_name, LOOP_MACHINERY):
            machinery = True
        if caller is None and not _matches(path, code.co_name, SYNC_FUNCTIONS + WRAPPERS):
            caller = Frame(code.co_name, path, frame.f_lineno)
        stack.append((path, frame.f_lineno))
        frame = frame.f_back
    user = caller is not None and roots.is_user(caller)
    return SyncStack(machinery or opening, opening, tuple(stack) if user else None)


def _first_batch(frame: FrameType, loaders: weakref.WeakSet[Any]) -> bool:
    """Whether this ``PerDeviceLoader.next`` is its iterator's first (each epoch
    makes a new one): its sync runs what came before the loop's first batch."""
    loader = frame.f_locals.get("self")
    if loader is None:
        return False
    try:
        if loader in loaders:
            return False
        loaders.add(loader)
    except TypeError:  # no weak reference to it: take it as an iteration
        return False
    return True


def _matches(path: str, function: str, known: tuple[tuple[str, str], ...]) -> bool:
    return any(path.endswith(end) and function == name for end, name in known)
