"""Python stacks from native code's point of view (child process side).

A crash in native code prints the Python stack into child.log; under
``--hang-timeout`` the parent's SIGUSR1 prints every thread's. ``faulthandler``
dumps from the signal itself, so a thread blocked in a collective's native wait
is shown too: a Python-level handler would only run once that wait returned.
"""

from __future__ import annotations

import faulthandler
import os
import signal

from xlacli.run_folder.hang import HANG_STACKS_ENV


def enable_stack_dumps() -> None:
    """Stacks on a fatal signal always; on SIGUSR1 when the parent watches for hangs."""
    faulthandler.enable()
    if os.environ.get(HANG_STACKS_ENV):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
