"""A pending graph's IR text, formatted by a forked copy of the process (child only).

torch_xla formats a graph's IR (``_get_xla_tensors_text``) at about 50 µs a
node: 0.4 s for a 24-layer decoder's training step, 1.5 s at 50 layers, on the
process's one busy thread, right before a sync that then compiles for seconds
while the machine's other cores wait (docs/performance.md). A fork taken at
that moment holds the same pending graph (copy-on-write): it formats the text
and writes it to a file while the process goes on to compile. The fork's copy
runs no Python of the user's and touches no device: it reads IR nodes in host
memory, writes one file and leaves by ``os._exit`` (no atexit handler, no
buffered output of the process's).

If a fork cannot be made, or a forked copy fails or is not done in time, the
text is taken in the process itself from then on, as before: a graph whose text
was lost has no IR block (the report says so through ``ir_nodes: null``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from xlacli.forks import fork_helper, stop_helper

# A forked copy that has not written its text by the end of the run (after the
# child's last sync, which compiled for longer than any text took): given up.
END_OF_RUN_WAIT_S = 60.0
# A text this long (~1,400 IR nodes, ~70 ms to format) is worth a fork (~10 ms for a
# process of a few GB, and its pages copied as they are written).
FORK_FROM_CHARS = 100_000


class GraphText:
    """One graph's IR text: already taken, or being written by a forked copy."""

    def __init__(self, text: str | None = None, pid: int = 0, path: Path | None = None) -> None:
        self._text = text
        self._pid = pid
        self._path = path
        self.failed = False  # the forked copy ended without its text

    def ready(self) -> bool:
        """The text is there (or lost): reading it will not wait."""
        if self._pid == 0:
            return True
        return self._reap(os.WNOHANG)

    def text(self, deadline: float | None = None) -> str | None:
        """The text; waits for the forked copy until ``deadline`` (``time.monotonic``),
        then stops it. None: lost."""
        while self._pid != 0:
            if deadline is None:
                self._reap(0)
            elif not self._reap(os.WNOHANG):
                if time.monotonic() >= deadline:
                    self._stop()
                else:
                    time.sleep(0.02)
        return self._text

    def _reap(self, options: int) -> bool:
        try:
            pid, _ = os.waitpid(self._pid, options)
        except ChildProcessError:  # reaped by someone else (a SIGCHLD handler of the program's)
            pid = self._pid
        if pid == 0:
            return False
        self._pid = 0
        self._text = self._read()  # written (renamed into place) only by a copy that succeeded
        self.failed = self._text is None
        return True

    def _read(self) -> str | None:
        if self._path is None:
            return None
        try:
            text = self._path.read_text(encoding="utf-8")
        except OSError:
            return None
        with contextlib.suppress(OSError):
            self._path.unlink()
        return text

    def _stop(self) -> None:
        stop_helper(self._pid)
        self._pid, self._text, self.failed = 0, None, True


class TextTaker:
    """Takes graph texts by fork into ``folder`` while forks work, in process after."""

    def __init__(self, folder: Path, format_text: Callable[[list[Any]], str]) -> None:
        self._folder = folder
        self._format = format_text
        self._forks = hasattr(os, "fork")
        self._count = 0
        self._recent: list[GraphText] = []  # the last few taken, newest last

    def take(self, tensors: list[Any]) -> GraphText:
        """The text of the graph pending on ``tensors``: by a forked copy, unless
        the last graph whose text is known was small (a new graph every step of
        a small model: a fork costs more than its text)."""
        text: GraphText | None = None
        if self._forks and not self._graphs_are_small():
            try:
                text = self._forked(tensors)
            except OSError as error:
                self.stop_forking(f"cannot fork ({error})")
        if text is None:
            text = GraphText(self._format(tensors))
        self._recent = [*self._recent[-3:], text]
        return text

    def _graphs_are_small(self) -> bool:
        for text in reversed(self._recent):
            if text.ready():
                taken = text.text()
                return taken is not None and len(taken) < FORK_FROM_CHARS
        return False

    def stop_forking(self, why: str) -> None:
        """Take every later text in the process itself."""
        if self._forks:
            self._forks = False
            message = f"xlacli: {why}; the graphs' IR is taken in the process from now on"
            print(message, file=sys.stderr)

    def _forked(self, tensors: list[Any]) -> GraphText:
        self._folder.mkdir(parents=True, exist_ok=True)
        self._count += 1
        path = self._folder / f"graph-{self._count}.txt"
        pid = fork_helper()
        if pid == 0:  # the copy: format, write, leave
            _write_and_exit(self._format, tensors, path)
        return GraphText(pid=pid, path=path)

    def finish(self) -> None:
        """The run is over: the folder of texts, gone (each was read and removed)."""
        shutil.rmtree(self._folder, ignore_errors=True)


def _write_and_exit(
    format_text: Callable[[list[Any]], str], tensors: list[Any], path: Path
) -> None:
    status = 1
    try:
        gc.disable()  # no collection: the process's gc callbacks stay its own
        # Behind the compile it runs beside (the run's own time) and the parent's
        # reading of the dump: the text is wanted only once the graph compiled.
        os.nice(10)
        for stop in (signal.SIGINT, signal.SIGTERM):
            signal.signal(stop, signal.SIG_DFL)  # stopped with the run, nothing recorded
        text = format_text(tensors)
        partial = path.with_suffix(".partial")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
        status = 0
    finally:
        os._exit(status)
