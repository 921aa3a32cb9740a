"""A stop that a signal asked for, kept until the run can act on it (child only).

The child's SIGINT/SIGTERM handler raises KeyboardInterrupt wherever Python
is. Library code that catches every exception (an import's fallback, a
``try: ... except BaseException``) can swallow it, and with later signals
ignored the run would go on to its last step. The request is therefore also
remembered, and every step boundary raises it again.
"""

from __future__ import annotations

import threading

_requested = threading.Event()


def request_stop() -> None:
    """Remember that the run must stop (called from the signal handler)."""
    _requested.set()


def raise_if_stop_requested() -> None:
    """Raise KeyboardInterrupt if a stop was asked for, even one already swallowed.

    Raises:
        KeyboardInterrupt: a signal asked the run to stop.
    """
    if _requested.is_set():
        raise KeyboardInterrupt
