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

Which syncs are iterations of the training loop (and which are setup) is
``loop_finder.py``'s call; ``--steps`` counts loop iterations.

A sync that finds nothing to run (``MpDeviceLoader``'s sync right after the
user's own ``mark_step``, ``torch_xla.compile``'s clearing sync) is not a
step: torch_xla looks a graph up in its cache (``CachedCompile``) or compiles
it (``UncachedCompile``) only when a sync has work, and it does so before the
call returns, while executions are counted asynchronously.

In eager mode nothing is pending at a sync: the optimizer steps end the steps
(``eager_steps.py``).

A sync made by torch_xla's Dynamo bridge (it syncs before it extracts a
``torch.compile`` graph) is not a step either: its compiles belong to the
user's step that called the compiled function, which goes on.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.utils.utils as xu

from xlacli.child.eager_steps import EagerSteps
from xlacli.child.loop_finder import LoopFinder
from xlacli.child.recorder import StepRecorder
from xlacli.child.sync_points import SYNC_WAIT_SETTING
from xlacli.parse.frames import current_code_roots

_GRAPH_LOOKUPS = ("CachedCompile", "UncachedCompile")
_CACHED_GRAPH_RUNS = "RunCachedGraphInputData"  # one sample per torch.compile graph run

_DYNAMO_BRIDGE = os.path.join(os.sep, "torch_xla", "_dynamo", "")
# Syncs before a loop is recognised, past which --steps counts them anyway:
# a script whose loop xlacli cannot see must still stop.
SETUP_SYNC_LIMIT = 256


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
        self.limit = limit  # loop iterations to run (warm-up included); None: to the end
        self.loop = LoopFinder(current_code_roots())
        self.wait = wait
        self.step = 0
        self.stopped = False
        self._originals: tuple[Callable[..., Any], Callable[[], Any]] | None = None
        self._lookups_before: int | None = None
        self._dynamo_runs_at_step = 0
        self._eager = EagerSteps(self._optimizer_stepped)
        self._started = time.perf_counter()

    def install(self) -> None:
        """Start step 0 and route every sync through the hook."""
        self._originals = (xu.getenv_as, xm._run_step_closures)
        xu.getenv_as = self._getenv_as
        xm._run_step_closures = self._run_step_closures
        self._eager.install()
        self._dynamo_runs_at_step = _dynamo_runs()
        self.recorder.begin(0)
        self._started = time.perf_counter()

    def uninstall(self) -> None:
        self._eager.uninstall()
        if self._originals is not None:
            xu.getenv_as, xm._run_step_closures = self._originals
            self._originals = None

    def _getenv_as(self, name: str, *args: Any, **kwargs: Any) -> Any:
        assert self._originals is not None
        if name == SYNC_WAIT_SETTING and not _called_by_dynamo_bridge():
            # read by sync() right before the step marker
            self._lookups_before = _graph_lookups()
        return self._originals[0](name, *args, **kwargs)

    def _run_step_closures(self) -> Any:
        assert self._originals is not None
        lookups, self._lookups_before = self._lookups_before, None
        # Counted before the step closures run: in eager mode a closure's
        # ``loss.item()`` compiles an op of its own, which pends at no sync.
        after = _graph_lookups() if lookups is not None else None
        context = self._originals[1]()
        ended = time.perf_counter()  # the step's clock: xlacli's bookkeeping is not the step's
        if self.stopped or lookups is None:
            return context
        if after == lookups and _dynamo_runs() == self._dynamo_runs_at_step:
            self.loop.saw_empty_sync(sys._getframe(1))  # 1: sync()
            return context  # nothing was pending, nothing ran: not a step boundary
        ended = self.recorder.synced(wait=self.wait, ended=ended)
        phase = self.loop.classify(
            self.step, sys._getframe(1), trained=self._trained()
        )  # 1: sync()
        self._end_step(phase, ended)
        self._eager.synced = True
        return context

    def _trained(self) -> bool:
        """A backward pass ran in the step now ending (no observer of it, as in a
        test's own process: take it as trained)."""
        backward = getattr(self.recorder.observers, "backward", None)
        return True if backward is None else backward.trained

    def _optimizer_stepped(self, caller: FrameType | None) -> None:
        """Eager mode: an optimizer step ended the loop's iteration."""
        if self.stopped:
            return
        ended = self.recorder.synced(wait=self.wait, ended=time.perf_counter())
        self._end_step(self.loop.classify(self.step, caller, machinery=True), ended)

    def _end_step(self, phase: str, ended: float) -> None:
        self.recorder.end(
            self.step,
            wall_time_s=ended - self._started,
            input_signature=self.inputs(),
            phase=phase,
            loop_start=self.loop.loop_start,
            # Where the sync was (file:line), after the loop started: the loop's place
            # or another (an evaluation's), which the phase says.
            **({"place": f"{place[0]}:{place[1]}"} if (place := self.loop.last_place) else {}),
        )
        self.step += 1
        counted = self.loop.iterations if self.loop.loop_start is not None else 0
        if self.limit is not None and (
            counted >= self.limit or self.step >= self.limit + SETUP_SYNC_LIMIT
        ):
            self.stopped = True
            raise StepLimitReached
        self._dynamo_runs_at_step = _dynamo_runs()
        self.recorder.begin(self.step, iteration=self.loop.iterations)
        self._started = time.perf_counter()


def _dynamo_runs() -> int:
    """torch.compile's graph runs so far. Its cached runs
    (``_run_cached_graph``) bump no compile or execution counter, only this
    metric, so a loop of compiled calls ends each step with a sync that finds
    nothing pending, and that sync still ends the step."""
    data = met.metric_data(_CACHED_GRAPH_RUNS)
    return data[0] if data else 0


def _graph_lookups() -> int:
    return sum(met.counter_value(name) or 0 for name in _GRAPH_LOOKUPS)


def _called_by_dynamo_bridge() -> bool:
    """``sync()`` was called inside torch_xla's Dynamo bridge (frames: this
    hook, ``sync``, then its callers). Only syncs pay this walk."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        if _DYNAMO_BRIDGE in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False
