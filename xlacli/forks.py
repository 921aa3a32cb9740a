"""Forked helper processes, shared by the child (``child/ir_text.py``: a graph's
IR text) and the parent (``assemble/beside.py``: half the report's analyses).

A fork holds its parent's memory copy-on-write, so the helper starts with
everything it needs and no start-up cost; it runs none of the parent's exit
handlers (it leaves by ``os._exit``), and whatever goes wrong in it costs the
caller only the time: the caller does the work itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import warnings


def fork_helper() -> int:
    """``os.fork()``: 0 in the helper, its pid in the caller.

    Raises:
        OSError: no fork could be made.
    """
    with warnings.catch_warnings():
        # Python 3.12+ warns that a threaded process's fork may deadlock: a helper
        # runs only its own work (formatting host memory, pure analyses), taking
        # no lock another thread may hold.
        warnings.simplefilter("ignore", DeprecationWarning)
        return os.fork()


def stop_helper(pid: int) -> None:
    """Kill a helper and reap it; one already gone is fine."""
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)
