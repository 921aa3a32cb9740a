"""The profiled window of steps (child process only: imports torch_xla).

torch_xla's profiler writes ``LOGDIR/plugins/profile/<timestamp>/`` when the
trace stops; the session folder is then renamed to the name the user chose,
so it can be found again. Whatever ends the window (the last step, an
exception, Ctrl-C), the trace is stopped and written.

The profiler allows one session per process: a script that drives it
itself (``xp.trace``, ``xp.trace_detached``, ``xp.start_trace``) gets it,
and the window stands aside (its ``trace`` event says why; a window already
open is stopped and written first) instead of failing the run when the two
sessions collide.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.debug.profiler as xp

from xlacli.child.backward_sites import BackwardSites
from xlacli.run_folder.events import STEP_TRACE_NAME, EventWriter


class ProfileWindow:
    """Start and stop torch_xla's trace around the recorded steps."""

    def __init__(
        self, logdir: Path, session: str, events: EventWriter, *, backward_lines: bool = True
    ):
        self.logdir = logdir
        self.session = session
        self.events = events
        self.active = False
        self._before: set[Path] = set()
        self._open_step: contextlib.ExitStack | None = None
        self.stood_aside: str | None = None  # the user's profiler call that took the session
        self._start_trace, self._stop_trace = xp.start_trace, xp.stop_trace
        _watch_user_profiler(self.user_profiling)
        self._backward_sites = BackwardSites()
        # The warm-up's graphs get their lines; under xlacli's torch.compile, the
        # FX graphs carry their own and autograd's anomaly mode has no business.
        if backward_lines and torch_xla._XLAC._get_ir_debug():
            self._backward_sites.start()

    @property
    def sessions_dir(self) -> Path:
        return self.logdir / "plugins" / "profile"

    def compiles_settled(self) -> None:
        """A warm-up step compiled nothing: stop recording Python frames.

        ``XLA_IR_DEBUG`` puts source lines in the HLO of the graphs compiled
        so far (the top-ops table shows them), but capturing the frames of
        every IR node doubles the tracing time of later steps: measured
        steps must not pay for it.
        """
        if torch_xla._XLAC._get_ir_debug():
            torch_xla._XLAC._set_ir_debug(False)
        self._backward_sites.stop()

    def start(self) -> None:
        """Wait for the warm-up's work to finish, then start tracing."""
        self.compiles_settled()
        if self.stood_aside is not None:
            return
        xm.wait_device_ops()
        self._before = set(self.sessions_dir.glob("*")) if self.sessions_dir.is_dir() else set()
        try:
            self._start_trace(str(self.logdir))
        except RuntimeError as error:  # a session xlacli did not see start
            self._stand_aside(f"torch_xla's profiler refused a second session ({error})")
            return
        self.active = True
        # Counters at the window's edges (device idle at both) say which of the
        # run's compiles and executions, in order, happened inside it.
        self.events.write("trace_start", time_ns=time.time_ns(), **_counts())

    @contextlib.contextmanager
    def step(self, step: int) -> Iterator[None]:
        """Annotate one step as the profile tools read steps.

        Not ``xp.StepTrace``: it pushes an IR scope, and torch_xla refuses a
        sync while a scope is open, which would break every ``step()`` that
        syncs or reads a value itself. The annotation is the same trace event
        (``_r=1`` marks it a step), without the scope.
        """
        if not self.active:
            yield
            return
        xp.set_tracer_marked_step(True)
        with torch_xla._XLAC.profiler.TraceMe(STEP_TRACE_NAME, _r=1, step_num=step):
            yield

    def enter_step(self, step: int) -> None:
        """Open ``step``'s annotation (``step`` as a context, split in two for
        the strategies whose steps end inside the user's own sync)."""
        self.exit_step()
        if not self.active:
            return  # nothing to annotate: no per-step objects outside the window
        self._open_step = contextlib.ExitStack()
        self._open_step.enter_context(self.step(step))

    def exit_step(self) -> None:
        """Close the annotation ``enter_step`` opened, if any."""
        open_step, self._open_step = self._open_step, None
        if open_step is not None:
            open_step.close()

    def user_profiling(self, call: str) -> None:
        """The script called torch_xla's profiler: give it the session."""
        if self.stood_aside is not None:
            return
        was_active = self.active
        self.exit_step()
        self.stop(stood_aside=call)
        if not was_active:
            self._stand_aside(call)

    def _stand_aside(self, reason: str) -> None:
        self.stood_aside = reason
        self.events.write("trace", stood_aside=reason, files=[], session_dir=None)

    def stop(self, stood_aside: str | None = None) -> None:
        """Flush the device, stop the trace, name the session folder
        (``stood_aside``: the script's own profiler call that ends the window)."""
        if not self.active:
            return
        self.active = False
        try:
            xm.wait_device_ops()
        finally:
            try:
                self._stop_trace()
            except RuntimeError as error:  # the script's own session took the profiler
                self._stand_aside(f"torch_xla's profiler refused to stop ({error})")
                return
        counts = _counts()
        written = sorted(set(self.sessions_dir.glob("*")) - self._before)
        session_dir = written[-1] if written else None
        if session_dir is not None and session_dir.name != self.session:
            target = self.sessions_dir / self.session
            session_dir = session_dir.rename(target)
        self.stood_aside = stood_aside
        self.events.write(
            "trace",
            **counts,
            stood_aside=stood_aside,
            session_dir=str(session_dir) if session_dir else None,
            files=sorted(str(p) for p in session_dir.iterdir()) if session_dir else [],
        )


# The script-facing entry points that start a profiling session (a server
# alone starts none: a session a client asks it for is caught when ours stops).
_USER_ENTRY_POINTS = ("trace", "trace_detached", "start_trace")


def _watch_user_profiler(notify: Callable[[str], None]) -> None:
    """Wrap ``torch_xla.debug.profiler``'s entry points so that a script's own
    call tells the window first (``trace_detached`` reaches the wrapped
    ``trace`` through the module)."""
    for name in _USER_ENTRY_POINTS:
        original = getattr(xp, name)
        if not getattr(original, "xlacli_watched", False):
            setattr(xp, name, _watched(original, f"xp.{name}", notify))


def _watched(
    original: Callable[..., object], call: str, notify: Callable[[str], None]
) -> Callable[..., object]:
    @functools.wraps(original)
    def watched(*args: object, **kwargs: object) -> object:
        notify(call)
        return original(*args, **kwargs)

    watched.xlacli_watched = True  # type: ignore[attr-defined]
    return watched


def _counts() -> dict[str, int]:
    # Samples of the timed metrics, not the counters: torch_xla's Dynamo bridge
    # clears the counters, and its cached-graph runs bump no ExecuteComputation.
    return {
        "compilations": max(met.counter_value("UncachedCompile") or 0, _samples("CompileTime")),
        "executions": max(
            (met.counter_value("ExecuteComputation") or 0)
            + (met.counter_value("ExecuteReplicated") or 0),
            _samples("ExecuteTime") + _samples("ExecuteReplicatedTime"),
        ),
    }


def _samples(metric: str) -> int:
    data = met.metric_data(metric)
    return int(data[0]) if data is not None else 0
