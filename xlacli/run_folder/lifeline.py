"""The child dies with its parent (child process side, no torch needed).

If xlacli is killed outright (SIGKILL, the OOM killer), nothing in it can stop
the model process, which would run on, stepping and allocating, with nobody
to read its results. So the child asks the kernel for a SIGTERM when its
parent dies (``PR_SET_PDEATHSIG``, Linux), which it handles like Ctrl-C: it
stops, flushes the trace and its events, and exits. Where ``prctl`` is not
available, a daemon thread watches the parent's pid instead.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any

PARENT_PID_ENV = "XLACLI_PARENT_PID"
_PR_SET_PDEATHSIG = 1
_WATCH_INTERVAL_S = 0.5


def die_with_parent() -> None:
    """Arrange a SIGTERM for this process when the parent that started it dies."""
    expected = os.environ.get(PARENT_PID_ENV)
    if not request_parent_death_signal():
        threading.Thread(target=_watch_parent, name="xlacli-lifeline", daemon=True).start()
    # The parent may have died before the request above was made.
    if expected and os.getppid() != int(expected):
        os.kill(os.getpid(), signal.SIGTERM)


def request_parent_death_signal() -> bool:
    """Ask the kernel for a SIGTERM when the parent dies (Linux); False if not
    available. Also usable as ``preexec_fn`` for a child that is not Python."""
    import ctypes  # here: the parent imports this module for PARENT_PID_ENV alone

    try:
        libc = _libc(ctypes)
        return bool(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _libc(ctypes: Any) -> Any:
    """The C library: by its usual name first (``find_library`` runs ``ldconfig -p``
    in a subprocess, a few milliseconds of the child's start-up)."""
    try:
        return ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        import ctypes.util

        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _watch_parent() -> None:
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(_WATCH_INTERVAL_S)
    os.kill(os.getpid(), signal.SIGTERM)
