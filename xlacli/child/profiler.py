"""The profiled window of steps (child process only: imports torch_xla).

torch_xla's profiler writes ``LOGDIR/plugins/profile/<timestamp>/`` when the
trace stops; the session folder is then renamed to the name the user chose,
so it can be found again. Whatever ends the window (the last step, an
exception, Ctrl-C), the trace is stopped and written.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.debug.profiler as xp

from xlacli.run.events import STEP_TRACE_NAME, EventWriter


class ProfileWindow:
    """Start and stop torch_xla's trace around the recorded steps."""

    def __init__(self, logdir: Path, session: str, events: EventWriter):
        self.logdir = logdir
        self.session = session
        self.events = events
        self.active = False
        self._before: set[Path] = set()
        self._open_step: contextlib.ExitStack | None = None

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

    def start(self) -> None:
        """Wait for the warm-up's work to finish, then start tracing."""
        self.compiles_settled()
        xm.wait_device_ops()
        self._before = set(self.sessions_dir.glob("*")) if self.sessions_dir.is_dir() else set()
        xp.start_trace(str(self.logdir))
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
        self._open_step = contextlib.ExitStack()
        self._open_step.enter_context(self.step(step))

    def exit_step(self) -> None:
        """Close the annotation ``enter_step`` opened, if any."""
        open_step, self._open_step = self._open_step, None
        if open_step is not None:
            open_step.close()

    def stop(self) -> None:
        """Flush the device, stop the trace, name the session folder."""
        if not self.active:
            return
        self.active = False
        try:
            xm.wait_device_ops()
        finally:
            xp.stop_trace()
        counts = _counts()
        written = sorted(set(self.sessions_dir.glob("*")) - self._before)
        session_dir = written[-1] if written else None
        if session_dir is not None and session_dir.name != self.session:
            target = self.sessions_dir / self.session
            session_dir = session_dir.rename(target)
        self.events.write(
            "trace",
            **counts,
            session_dir=str(session_dir) if session_dir else None,
            files=sorted(str(p) for p in session_dir.iterdir()) if session_dir else [],
        )


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
