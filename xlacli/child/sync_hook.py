"""A script's own step boundaries (child process only: imports torch_xla).

Every way a script ends a step runs one function: ``xm.mark_step()``,
``MpDeviceLoader`` (at each batch and at the end),
``xm.optimizer_step(..., barrier=True)`` and ``torch_xla.compile`` (before
and after the function) all call ``torch_xla.sync()``, the only caller of the
native ``_xla_step_marker``. Hooking inside ``sync`` counts each path once,
whatever name the script imported.

The hook adds no Python frame around the native call: torch_xla names a
graph's cause from the innermost frames (``sync``, then the loader's
``next``, ``torch_xla.compile``...), and a frame of ours there would turn
every step into "user code trying to access tensor value". So it uses the
two module-level calls ``sync`` makes on either side of the step marker:
``xu.getenv_as('XLA_SYNC_WAIT', ...)`` just before it (the "before" count),
and ``xm._run_step_closures()`` just after it (the step ends there).

A sync that finds nothing to run (``MpDeviceLoader``'s sync right after the
user's own ``mark_step``, ``torch_xla.compile``'s clearing sync) is not a
step: torch_xla looks a graph up in its cache (``CachedCompile``) or compiles
it (``UncachedCompile``) only when a sync has work, and it does so before the
call returns, while executions are counted asynchronously.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.utils.utils as xu

from xlacli.child.recorder import StepRecorder

_GRAPH_LOOKUPS = ("CachedCompile", "UncachedCompile")
SYNC_WAIT_SETTING = "XLA_SYNC_WAIT"


class StepLimitReached(BaseException):
    """``--steps`` steps ran: unwinds the script (its ``finally:`` blocks run).

    A BaseException, so the script's ``except Exception:`` does not swallow it.
    """


class SyncHook:
    """Hooks ``torch_xla.sync()``: each sync that ran a graph ends a step."""

    def __init__(
        self,
        recorder: StepRecorder,
        *,
        limit: int | None,
        wait: bool,
        inputs: Callable[[], list[str]] = list,
    ):
        self.recorder = recorder
        self.inputs = inputs  # the step's input signature (the script's moves to the device)
        self.limit = limit  # steps to run (warm-up included); None: to the script's end
        self.wait = wait
        self.step = 0
        self.stopped = False
        self._originals: tuple[Callable[..., Any], Callable[[], Any]] | None = None
        self._lookups_before: int | None = None
        self._started = time.perf_counter()

    def install(self) -> None:
        """Start step 0 and route every sync through the hook."""
        self._originals = (xu.getenv_as, xm._run_step_closures)
        xu.getenv_as = self._getenv_as
        xm._run_step_closures = self._run_step_closures
        self.recorder.begin(0)
        self._started = time.perf_counter()

    def uninstall(self) -> None:
        if self._originals is not None:
            xu.getenv_as, xm._run_step_closures = self._originals
            self._originals = None

    def _getenv_as(self, name: str, *args: Any, **kwargs: Any) -> Any:
        assert self._originals is not None
        if name == SYNC_WAIT_SETTING:  # read by sync() right before the step marker
            self._lookups_before = _graph_lookups()
        return self._originals[0](name, *args, **kwargs)

    def _run_step_closures(self) -> Any:
        assert self._originals is not None
        context = self._originals[1]()
        lookups, self._lookups_before = self._lookups_before, None
        if self.stopped or lookups is None or _graph_lookups() == lookups:
            return context  # nothing was pending: not a step boundary
        if self.wait:
            # Executions run asynchronously; waiting keeps each step's
            # executions (and their counters) inside that step.
            xm.wait_device_ops()
        self._end_step()
        return context

    def _end_step(self) -> None:
        now = time.perf_counter()
        self.recorder.end(self.step, wall_time_s=now - self._started, input_signature=self.inputs())
        self.step += 1
        if self.limit is not None and self.step >= self.limit:
            self.stopped = True
            raise StepLimitReached
        self.recorder.begin(self.step)
        self._started = time.perf_counter()


def _graph_lookups() -> int:
    return sum(met.counter_value(name) or 0 for name in _GRAPH_LOOKUPS)
