"""Work run in a forked second process while this one goes on (parent only).

The report's analyses are Python on one core; once the child has ended, the
machine's other cores wait. For a large run (a 50-layer decoder's graphs: 3-4 s
of analysis) the processors that read no other's section and that none reads
(``processors.py``'s ``beside``) run in a fork of this process, which already
holds the organised run and its parsed files (copy-on-write), and hand their
sections back pickled through a pipe.

Whatever goes wrong there (a section that cannot be pickled, the fork killed,
no fork on this system) costs nothing but the time: the caller runs the same
work itself, and the report is the same.
"""

from __future__ import annotations

import gc
import os
import pickle
import select
import time
from collections.abc import Callable
from typing import Any

from xlacli.forks import fork_helper, stop_helper

# The second process is given this long after this one has finished its own share
# (its share is the same size); then it is stopped and its work done here.
WAIT_AFTER_OWN_SHARE_S = 300.0


def can_run_beside() -> bool:
    """A fork is possible and a second core would run it."""
    if not hasattr(os, "fork"):
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1
    except AttributeError:
        return (os.cpu_count() or 1) > 1


class Beside:
    """A forked process computing one result."""

    def __init__(self, pid: int, pipe: int) -> None:
        self._pid = pid
        self._pipe = pipe

    def result(self) -> Any | None:
        """The work's result; None if the second process failed (the caller does it)."""
        chunks: list[bytes] = []
        deadline = time.monotonic() + WAIT_AFTER_OWN_SHARE_S
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._pipe], [], [], left)[0]:
                    stop_helper(self._pid)
                    return None
                chunk = os.read(self._pipe, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(self._pipe)
            gc.unfreeze()
        _, status = os.waitpid(self._pid, 0)
        if status != 0:
            return None
        try:
            return pickle.loads(b"".join(chunks))
        except Exception:  # a section that does not load back: done here instead
            return None


def start_beside(work: Callable[[], Any]) -> Beside | None:
    """``work()`` started in a fork; None when no fork could be made."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    # The heap as it is stays out of both processes' collections: a collection
    # writes to every object it visits, and each page written is copied.
    gc.freeze()
    try:
        pid = fork_helper()
    except OSError:
        gc.unfreeze()
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:
        os.close(read_end)
        _work_and_exit(work, write_end)
    os.close(write_end)
    return Beside(pid, read_end)


def _work_and_exit(work: Callable[[], Any], pipe: int) -> None:
    """In the fork: the result, pickled into the pipe; leave without this
    process's exit handlers (its run folder and terminal are the parent's)."""
    status = 1
    try:
        gc.disable()  # short-lived: what it allocates goes with it
        data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(pipe, "wb") as out:
            out.write(data)
        status = 0
    finally:
        os._exit(status)
