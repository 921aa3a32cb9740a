"""One step's events, whoever drives the steps (child process only).

Every target strategy (a model file's loop, a script's own syncs) calls
``begin`` when a step starts and ``end`` when its sync is done; the recorder
opens the profiled window at the first recorded step, annotates traced steps,
and writes the ``step`` event with the metric deltas since the last one.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import torch_xla.core.xla_model as xm

from xlacli.capture.failures import describe_exception
from xlacli.child.metric_deltas import HELD_KEY, MetricTracker, lookups_count_executions
from xlacli.child.stop import raise_if_stop_requested
from xlacli.run_folder.events import EventWriter

if TYPE_CHECKING:
    from xlacli.child.observers import StepObservers


class StepRecorder:
    """Writes ``setup``, ``step`` and ``tail`` events with their metric deltas."""

    def __init__(
        self,
        events: EventWriter,
        window: Any,
        warmup: int,
        *,
        observers: StepObservers,
        max_trace_steps: int | None = None,
    ):
        self.events = events
        self.tracker = MetricTracker()
        self.window = window  # a ProfileWindow, or None
        self.warmup = warmup
        self.observers = observers
        self.max_trace_steps = max_trace_steps  # reliability: bound the trace's memory
        self.steps_done = 0
        self._window_opened = False
        self._last_step = -2  # the last step event written, and its fields but the clock
        self._last_fields: dict[str, Any] | None = None
        self._waited = True  # the current step's sync waited for the device
        self._running_on = False  # device work may still run (the last sync did not wait)

    @property
    def clocks_steps(self) -> bool:
        """The script took the profiler: xlacli traces no more, and the steps the
        child clocks are the profile's measure, so each must wait for its device
        work (the executions it counts, the time it clocks), as an unprofiled
        capture does. (A window that stood aside is never active.)"""
        return self.window is not None and self.window.stood_aside is not None

    def synced(self, *, wait: bool, ended: float) -> float:
        """A step's sync is done (the strategy calls it right after): wait for
        the device if ``wait`` (exact step clocks asked for), if the profile
        clocks the steps, or if executions cannot be counted by their cache
        lookups (``metric_deltas.py``); else the step's device work runs on
        into the next step, as in the user's own loop.

        ``ended``: the ``perf_counter`` time the strategy's sync returned.
        Returns when the step ended: then, or when the device wait did (the
        wait is the step's; this bookkeeping is not).
        """
        self._waited = wait or self.clocks_steps or not lookups_count_executions()
        self._running_on = not self._waited
        if self._waited:
            xm.wait_device_ops()  # a failure here is the step's
            return time.perf_counter()
        return ended

    def warn(self, message: str) -> None:
        self.events.write("warning", message=message)

    def setup(self, **fields: Any) -> None:
        """What happened before the first step (loading the model)."""
        reads = self.observers.value_reads.delta()
        # Nothing waited for the device: what setup scheduled may still run.
        delta = self.tracker.delta(waited=not lookups_count_executions())
        self._running_on = self._running_on or delta.get("executions", 0) > 0
        self.events.write("setup", **fields, **delta, **reads)
        self.observers.after_step(None)

    def begin(self, step: int, iteration: int | None = None) -> None:
        """Step ``step`` starts: open the trace at the first recorded step.

        ``iteration``: the loop iterations done before it (default ``step``): a
        script's setup syncs are not warm-up steps, so the window opens after
        the loop's own warm-up.
        """
        raise_if_stop_requested()
        if self.window is None:
            return
        done = step if iteration is None else iteration
        # ``>=``: the count can jump by two, when a script's second sync at a
        # line shows its first one was the loop's first iteration, not setup.
        if done >= self.warmup and not self._window_opened:
            self._window_opened = True
            self.window.start()
        if self.max_trace_steps is not None and done - self.warmup == self.max_trace_steps:
            self.window.stop()  # the profiler holds the trace in memory until it stops
        self.window.enter_step(step)
        if self.window.active:
            self.observers.op_tracing.start()

    def end(self, step: int, **record: Any) -> dict[str, Any]:
        """Step ``step``'s sync is done: write its event; returns its metric delta."""
        raise_if_stop_requested()
        traced = self.window is not None and self.window.active
        if self.window is not None:
            self.window.exit_step()
        delta = self.tracker.delta(waited=self._waited)
        self._waited = True
        compiled = "UncachedCompile" in delta["counters"]
        if self.window is not None and not compiled:
            self.window.compiles_settled()
        self.observers.compiles_in_step(compiled)
        self.observers.runtime()  # the device exists by now, whoever made it
        observed = self.observers.step_fields(traced)
        self._write_step(step, {"traced": traced, **record, **delta, **observed})
        self.observers.after_step(step)
        self.steps_done = step + 1
        return delta

    def _write_step(self, step: int, fields: dict[str, Any]) -> None:
        """The step's event; a step that repeats the one before in all but its
        clock is one short ``same`` line (the parser copies the step before):
        the log, and the time spent writing it, grow with what changes."""
        wall_time_s = fields.pop("wall_time_s", None)
        if step == self._last_step + 1 and fields == self._last_fields and wall_time_s is not None:
            self.events.write_same(wall_time_s)
        else:
            clock = {} if wall_time_s is None else {"wall_time_s": wall_time_s}
            self.events.write("step", step=step, **clock, **fields)
            self._last_fields = fields
        self._last_step = step

    def finish(self, *, running: bool) -> None:
        """After the last step: close the trace, record what ran after the steps.

        Args:
            running: a step was cut short (an error, Ctrl-C): what ran since
                the last step event belongs to it; else to no step (a
                script's work after its last sync).
        """
        try:
            if self.window is not None:
                self.window.exit_step()
                self.window.stop()
            self.observers.close()
        finally:
            # Every execution counted and timed (only after a sync that did not
            # wait: asking a device that never started would start it).
            try:
                if self._running_on:
                    xm.wait_device_ops()
            except Exception as error:  # what was counted stands; say what failed
                self.warn(f"the device failed after the last step: {describe_exception(error)}")
            delta = {**self.tracker.delta(final=True), **self.observers.value_reads.delta()}
            if delta["counters"] or delta.get(HELD_KEY):
                self.events.write("tail", step=self.steps_done if running else None, **delta)
