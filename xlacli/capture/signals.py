"""SIGINT and SIGTERM while a capture runs: caught in one place, never raised.

A signal handler that raises (``KeyboardInterrupt``) can fire anywhere: inside
a progress callback, inside an ``except`` clause, half-way through writing the
report. The exception then escapes the code meant to stop the child, and the
child is orphaned. So the handler only records the signal; the loop that
follows the child reads it, forwards it, waits, and the report is written as
usual (see ``runner.run_child``).
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType, TracebackType
from typing import Any

from xlacli.errors import EXIT_INTERRUPTED

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_on_sigterm() -> Any:
    """Outside a capture, SIGTERM ends xlacli at once with exit 130.

    Raising from the handler instead would be unsafe: an exception raised in
    the middle of an import or a class definition comes out as another error
    (``RuntimeError: Error calling __set_name__``), with a traceback. Exiting
    at once is safe because, outside a capture, xlacli has no child that could
    be left behind (TensorBoard, the one other, dies with xlacli: see
    ``lifeline.request_parent_death_signal``). Returns the previous handler
    (None outside the main thread, where Python sets no handler).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _exit_terminated)


def _exit_terminated(signum: int, frame: FrameType | None) -> None:
    os.write(2, b"xlacli: terminated\n")
    os._exit(EXIT_INTERRUPTED)


class StopSignals:
    """Records SIGINT and SIGTERM instead of raising, while the ``with`` block runs.

    ``received`` is the first signal (None: none yet); ``count`` how many came,
    so a second Ctrl-C can mean "stop waiting politely".
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.count = 0
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        # Python only lets the main thread set handlers; elsewhere (a test
        # calling the flow from a thread) signals keep their default meaning.
        if threading.current_thread() is threading.main_thread():
            for signum in STOP_SIGNALS:
                self._previous[signum] = signal.signal(signum, self._record)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()

    def _record(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        self.count += 1

    @property
    def name(self) -> str:
        """The first signal's name, e.g. ``SIGTERM`` ("" when none came)."""
        return signal.Signals(self.received).name if self.received else ""
