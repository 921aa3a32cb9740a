"""Following the processes a script starts itself (child process only).

A script that calls ``torch.multiprocessing.spawn(fn, nprocs=N)``,
``xmp.spawn(fn)`` or starts ``multiprocessing.Process(target=its_own_fn)``
launches its own ranks. Each is followed into ``RUN/rank-R/`` as a torchrun
rank is: ``multiprocessing``'s spawn start method runs a fresh interpreter
from a command line it builds, and the follower puts
``rank_process.follow(R)`` at its head, so the debug variables name the rank's
folder before torch_xla is imported there, and the recorder is installed
before the script is re-imported. Which processes are ranks:

- torch's ``_wrap(fn, i, ...)``: rank ``i``;
- the workers of ``xmp.spawn(fn)`` (nprocs None: one per local device), in the
  order they start;
- a ``Process`` whose target is the script's own function, in start order.

A library's helper processes (DataLoader workers) are left alone. A process
started with ``fork`` or ``forkserver`` cannot be given a fresh environment
before torch_xla is imported (it is already, or the server's is shared): it is
not followed, and the run says so.
"""

from __future__ import annotations

import itertools
import multiprocessing
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xlacli.child.rank_process import FollowedCall
from xlacli.child.recorder import StepRecorder
from xlacli.parse.frames import Frame, current_code_roots
from xlacli.run_folder.request import RunPaths
from xlacli.run_folder.spawned import (
    MULTIPROCESSING,
    TORCH_SPAWN,
    XMP_SPAWN,
    RankTemplate,
    SpawnedProcess,
)

FOLLOWED_START_METHOD = "spawn"


@dataclass(frozen=True)
class RankChoice:
    """A process to follow: its rank and what launched it."""

    rank: int
    launcher: str


class SpawnFollower:
    """Patches ``Process.start`` and the spawn command line while the script runs."""

    def __init__(self, template: RankTemplate, request_path: Path, recorder: StepRecorder):
        self.template = template
        self.request_text = request_path.read_text(encoding="utf-8")
        self.recorder = recorder
        self.started: dict[int, SpawnedProcess] = {}
        self._xmp_ranks: Iterator[int] | None = None  # inside xmp.spawn: its workers' ranks
        self._own_ranks = itertools.count()  # Processes of the script's own functions
        self._starting = threading.local()  # the rank of the process being started
        self._warned: set[str] = set()
        self._originals: tuple[Callable[..., Any], ...] = ()

    def install(self) -> None:
        from multiprocessing import process, spawn

        follower = self
        original_start = process.BaseProcess.start

        def start(proc: Any) -> None:
            follower._start(proc, original_start)

        self._originals = (original_start, spawn.get_command_line)
        process.BaseProcess.start = start  # type: ignore[method-assign,assignment]
        spawn.get_command_line = self._command_line

    def uninstall(self) -> None:
        if self._originals:
            from multiprocessing import process, spawn

            process.BaseProcess.start = self._originals[0]  # type: ignore[method-assign]
            spawn.get_command_line = self._originals[1]
            self._originals = ()

    def xmp_spawn(self, original: Callable[..., Any], fn: Any, start_method: str, args: Any) -> Any:
        """``xmp.spawn(fn)`` (nprocs None): torch_xla's own processes, followed."""
        self._xmp_ranks = itertools.count()
        try:
            return original(FollowedCall(fn), None, start_method, args)
        finally:
            self._xmp_ranks = None

    def _start(self, proc: Any, original_start: Callable[[Any], None]) -> None:
        choice = self._choose(proc)
        if choice is None:
            original_start(proc)
            return
        folder = self.template.folder_of(choice.rank)
        if folder.exists():
            self._warn_once(
                "again",
                f"the script started rank {choice.rank} again: only its first "
                "set of processes is followed",
            )
            original_start(proc)
            return
        _wrap_target(proc)
        _prepare_folder(folder, self.request_text)
        self._starting.rank = choice.rank
        try:
            original_start(proc)
        finally:
            self._starting.rank = None
        process = SpawnedProcess(choice.rank, proc.pid, choice.launcher)
        process.save(folder)
        self.started[choice.rank] = process

    def _choose(self, proc: Any) -> RankChoice | None:
        """The rank ``proc`` will be, or None: not a rank, or not followable."""
        choice = _choice(proc, self._xmp_ranks, self._own_ranks)
        if choice is None:
            return None
        method = getattr(proc, "_start_method", None) or multiprocessing.get_start_method()
        if method != FOLLOWED_START_METHOD:
            self._warn_once(
                method,
                f"the script starts its processes with the {method!r} start method: "
                "xlacli follows only 'spawn' processes (torch.multiprocessing.spawn's "
                "and xmp.spawn's); this run records the main process alone",
            )
            return None
        return choice

    def _command_line(self, **kwds: Any) -> list[str]:
        """multiprocessing's spawn command, with the rank's ``follow(R)`` first."""
        command: list[str] = list(self._originals[1](**kwds))
        rank = getattr(self._starting, "rank", None)
        if rank is None or "-c" not in command:
            return command
        program = command.index("-c") + 1
        follow = f"from xlacli.child.rank_process import follow; follow({rank}); "
        command[program] = follow + command[program]
        return command

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.recorder.warn(message)


def _choice(
    proc: Any, xmp_ranks: Iterator[int] | None, own_ranks: Iterator[int]
) -> RankChoice | None:
    target = getattr(proc, "_target", None)
    args: tuple[Any, ...] = tuple(getattr(proc, "_args", ()))
    if _is_torch_wrap(target) and len(args) >= 2 and isinstance(args[1], int):
        return RankChoice(args[1], TORCH_SPAWN)
    if xmp_ranks is not None:
        return RankChoice(next(xmp_ranks), XMP_SPAWN)
    if target is not None and is_user_function(target):
        return RankChoice(next(own_ranks), MULTIPROCESSING)
    return None


def _is_torch_wrap(target: Any) -> bool:
    return (
        getattr(target, "__module__", None) == "torch.multiprocessing.spawn"
        and getattr(target, "__name__", None) == "_wrap"
    )


def is_user_function(target: Any) -> bool:
    """A function of the user's code (not a library's helper such as a
    DataLoader worker's loop)."""
    code = getattr(target, "__code__", None)
    if code is None:
        return False
    return current_code_roots().is_user(Frame(target.__name__, code.co_filename, 0))


def _wrap_target(proc: Any) -> None:
    """The user's function, run in a ``FollowedCall`` (torch's ``_wrap`` gets it
    as its first argument; a plain Process, as its target)."""
    if _is_torch_wrap(proc._target):
        proc._args = (FollowedCall(proc._args[0]), *proc._args[1:])
    elif is_user_function(proc._target):
        proc._target = FollowedCall(proc._target)


def _prepare_folder(folder: Path, request_text: str) -> None:
    paths = RunPaths(folder)
    paths.xla_dump.mkdir(parents=True)
    paths.request.write_text(request_text, encoding="utf-8")
