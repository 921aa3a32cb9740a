"""The hang watchdog (parent side, no torch): ``--hang-timeout S``.

A rank blocked in a collective shows nothing: no step, no compile, no line
printed. The parent watches every rank's files in the shared run folder (the
events, the child's output and torch_xla's debug log, which grows with every
compile and execution); when none has grown for ``S`` seconds, no rank has made
progress. A rank busy in Python or native code without writing anything
(importing torch, a long compile) is progress too: each parent reads its
child's CPU time and, while the child keeps a core at least a quarter busy,
appends to a heartbeat file the other ranks watch (removed at the end). Then
each rank's parent asks its child for its Python stack (SIGUSR1:
``faulthandler`` in the child dumps every thread, even one blocked in native
code) and then stops it. A run that ends normally leaves no trace: nothing is
written unless the watchdog fires.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from xlacli.report.run_report import REPORT_FILE
from xlacli.run_folder.hang import HANG_FILE, HEARTBEAT_FILE, STACKS_FILE
from xlacli.run_folder.request import RunPaths

_STACK_WAIT_S = 3.0
_PEERS_WAIT_S = 10.0
_BUSY_WINDOW_S = 1.0
_BUSY_SHARE = 0.25  # of one core, over the window: a blocked process uses ~none


@dataclass
class HangWatch:
    """Fires when none of ``watched`` run folders has grown for ``timeout_s``."""

    timeout_s: float
    watched: Callable[[], Iterable[RunPaths]]  # every rank's folder (this one included)
    clock: Callable[[], float] = time.monotonic
    _sizes: tuple[int, ...] = ()
    _last_progress: float | None = None
    _window: tuple[float, float] | None = None  # (time, child CPU seconds) it began
    _running: bool = False  # the child's main thread was seen running in the window
    fired_after_s: float | None = field(default=None, init=False)

    def beat(self, pids: int | Iterable[int], heartbeat: Path) -> None:
        """Append to ``heartbeat`` when the child (with the processes its script
        started, when xlacli follows them) was busy over the last window: a main
        thread seen running (or waiting for the disk), or a quarter of a core
        used. A thread blocked in a collective sleeps."""
        samples = [child_cpu(pid) for pid in ((pids,) if isinstance(pids, int) else pids)]
        present = [sample for sample in samples if sample is not None]
        now = self.clock()
        if not present:
            return
        cpu = sum(used for _, used in present)
        self._running = self._running or any(state in "RD" for state, _ in present)
        if self._window is None:
            self._window = (now, cpu)
        elif now - self._window[0] >= _BUSY_WINDOW_S:
            busy = cpu - self._window[1] >= _BUSY_SHARE * (now - self._window[0])
            if busy or self._running:
                with heartbeat.open("a", encoding="utf-8") as handle:
                    handle.write(".")
            self._window, self._running = (now, cpu), False

    def stalled(self) -> bool:
        """Poll the folders; True once no rank has progressed for the timeout,
        or another rank's watchdog has fired (its ``hang.json``)."""
        now = self.clock()
        folders = list(self.watched())
        sizes = tuple(_progress_size(paths) for paths in folders)
        if self._last_progress is None or sizes != self._sizes:
            self._sizes, self._last_progress = sizes, now
        idle = now - self._last_progress
        if idle < self.timeout_s and not any((p.root / HANG_FILE).exists() for p in folders):
            return False
        self.fired_after_s = max(idle, self.timeout_s)
        return True

    def wait_for_peers(self, limit_s: float = _PEERS_WAIT_S) -> None:
        """Give every other rank the time to dump its stack before this one stops
        its child: a stopped rank breaks the others' collectives, and they would
        fail with a closed connection instead of showing where they waited."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if all(_settled(paths) for paths in self.watched()):
                return
            time.sleep(0.2)


def _settled(paths: RunPaths) -> bool:
    """The rank has dumped its stack, or its run is over."""
    return (paths.root / STACKS_FILE).exists() or (paths.root / REPORT_FILE).exists()


def _progress_size(paths: RunPaths) -> int:
    files = (paths.events, paths.child_log, paths.debug_log, paths.root / HEARTBEAT_FILE)
    return sum(_size(path) for path in files)


def child_cpu(pid: int) -> tuple[str, float] | None:
    """A process's state (R running, S sleeping, D disk...) and the CPU seconds
    (user and system) it has used; None where ``/proc`` is not there (not
    Linux) or the process is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # After the command name: state is field 3, utime 14 and stime 15 (1-based).
    return fields[0], (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dump_child_stacks(pid: int, paths: RunPaths, idle_s: float, timeout_s: float) -> None:
    """Ask the child for every thread's stack (it writes to its output, child.log),
    copy the dump to ``hang-stacks.txt`` and record the hang in ``hang.json``."""
    start = _size(paths.child_log)
    try:
        os.kill(pid, signal.SIGUSR1)
    except ProcessLookupError:
        return
    text = _wait_for_dump(paths.child_log, start)
    (paths.root / STACKS_FILE).write_text(text, encoding="utf-8")
    record = {"idle_s": round(idle_s, 1), "timeout_s": timeout_s, "stacks": STACKS_FILE}
    (paths.root / HANG_FILE).write_text(json.dumps(record, sort_keys=True) + "\n", "utf-8")


def _wait_for_dump(log: Path, start: int) -> str:
    """The text the child wrote after ``start``, once it stops growing."""
    deadline = time.monotonic() + _STACK_WAIT_S
    seen = -1
    while time.monotonic() < deadline:
        time.sleep(0.2)
        size = _size(log)
        if size > start and size == seen:
            break
        seen = size
    with log.open("rb") as handle:
        handle.seek(start)
        return handle.read().decode("utf-8", errors="replace")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
