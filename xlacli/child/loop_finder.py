"""Which of a script's syncs are iterations of its training loop (child process).

A script syncs before its loop too: a wrapper that shards or flattens
parameters (an FSDP auto-wrap syncs once per wrapped module), a warm-up
forward. Those are the **setup** phase; ``--steps N`` counts loop iterations.
The loop is recognised at the first sync that comes from a loop's machinery
(an ``MpDeviceLoader`` iteration, ``xm.optimizer_step``, a profiler
``StepTrace``, a ``torch_xla.compile`` function), or from the script's own
``mark_step``/``sync`` at a line (with the same stack) that synced before:
that earlier sync was the loop's first iteration. After that, every sync is
a loop iteration.

A sync made by a library (FSDP's own ``torch_xla.sync()`` while it wraps)
recurs too, but is not the script's loop, so it never starts one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import FrameType

from xlacli.parse.frames import CodeRoots, Frame

# (the file's path ending, function) of a frame that makes a sync a loop iteration
LOOP_MACHINERY = (
    ("torch_xla/distributed/parallel_loader.py", "next"),
    ("torch_xla/core/xla_model.py", "optimizer_step"),
    ("torch_xla/debug/profiler.py", "__exit__"),  # StepTrace
    ("torch_xla/torch_xla.py", "_compile"),  # a torch_xla.compile function's end
    ("torch_xla/torch_xla.py", "_clear_pending_ops_before_compile"),  # and its start
)
# The functions a script calls to sync, which call the step marker.
SYNC_FUNCTIONS = (
    ("torch_xla/torch_xla.py", "sync"),
    ("torch_xla/core/xla_model.py", "mark_step"),
)
SETUP = "setup"
LOOP = "loop"

SyncSite = tuple[tuple[str, int], ...]


@dataclass
class LoopFinder:
    """Tells setup syncs from loop iterations, one sync at a time."""

    roots: CodeRoots
    loop_start: int | None = None  # the first loop step (may be an earlier sync)
    iterations: int = 0
    _user_syncs: dict[SyncSite, int] = field(default_factory=dict)  # site -> its first step

    def classify(self, step: int, frame: FrameType | None, *, machinery: bool = False) -> str:
        """The phase of step ``step``, whose sync's stack starts at ``frame``
        (``machinery``: the step ended at a loop's machinery that is no sync,
        an optimizer step in eager mode)."""
        if self.loop_start is None:
            on_stack, user_site = _read_stack(frame, self.roots)
            machinery = machinery or on_stack
            if machinery:
                self.loop_start = step
            elif user_site is not None and user_site in self._user_syncs:
                # The same line synced before: that sync was the first iteration.
                self.loop_start = self._user_syncs[user_site]
                self.iterations += 1
            else:
                if user_site is not None:
                    self._user_syncs[user_site] = step
                return SETUP
        self.iterations += 1
        return LOOP


def _read_stack(frame: FrameType | None, roots: CodeRoots) -> tuple[bool, SyncSite | None]:
    """(a loop's machinery is on the stack, the sync's site when the script's
    own code called ``sync``/``mark_step``)."""
    stack: list[tuple[str, int]] = []
    caller: Frame | None = None
    machinery = False
    while frame is not None:
        code = frame.f_code
        path = code.co_filename.replace("\\", "/")
        if _matches(path, code.co_name, LOOP_MACHINERY):
            machinery = True
        if caller is None and not _matches(path, code.co_name, SYNC_FUNCTIONS):
            caller = Frame(code.co_name, path, frame.f_lineno)
        stack.append((path, frame.f_lineno))
        frame = frame.f_back
    user = caller is not None and roots.is_user(caller)
    return machinery, tuple(stack) if user else None


def _matches(path: str, function: str, known: tuple[tuple[str, str], ...]) -> bool:
    return any(path.endswith(end) and function == name for end, name in known)
