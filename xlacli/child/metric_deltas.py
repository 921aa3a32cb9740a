"""torch_xla's counters and timed-metric samples since the last step event
(child process only: imports torch_xla).

torch_xla keeps the last 1024 samples of each timed metric. Reading them
returns the whole buffer (~65 µs once ``ExecuteTime`` is full, more than a
small model's step), so the execution times are not read at every step:
while the counters alone count the executions (no ``torch.compile`` graph
has run: its cached runs bump no counter), a step's samples are held in
torch_xla's buffer and read with a later step's, at most ``HOLD_EXECUTIONS``
executions or ``HOLD_SECONDS`` later. Those come in the event's
``execute_time_ns_held`` (read now, belonging to this and earlier steps, in
order, not counted for this step); the parser joins both lists in order, so
each execution keeps its own time.

An ``ExecuteTime`` sample runs from the graph's dispatch to its end, so a
graph queued behind others (a step that did not wait) holds their time too.
Each sample's end (``execute_end_s``, ``execute_end_s_held``: torch_xla's
timestamp, in seconds) comes beside it, so the parser can keep each
execution's own time on the device (``parse/execute_times.py``).

A step need not wait for its device to count its executions: a lazy graph's
execution is scheduled right after its cache lookup (``CachedCompile`` or
``UncachedCompile``, bumped at the sync, in the calling thread), while
``ExecuteComputation`` moves only when the execution is done, maybe a step
later. A step that did not wait (``waited=False``: only where lookups are
executions, ``lookups_count_executions``) counts its lookups; a step that
waited counts the execution counters less what earlier steps counted by
their lookups. Each event says its count in ``executions``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import torch_xla

_XLAC: Any = torch_xla._XLAC

COMPILE_METRIC = "CompileTime"
# SPMD graphs run through ExecuteReplicated: their times are ExecuteReplicatedTime.
EXECUTE_METRICS = ("ExecuteTime", "ExecuteReplicatedTime")
EXECUTION_COUNTERS = ("ExecuteComputation", "ExecuteReplicated")
COMPILE_COUNTER = "UncachedCompile"
LOOKUP_COUNTERS = ("CachedCompile", "UncachedCompile")
# Counters bumped when an execution is done (its results wrapped in handles),
# on the runtime's thread: in a step that did not wait they move with the
# device's timing, not with the step.
FINISH_COUNTERS = (*EXECUTION_COUNTERS, "CreateDataHandles")
HELD_KEY = "execute_time_ns_held"
# Each timed execution's end, parallel to the two lists above.
ENDS_KEY = "execute_end_s"
ENDS_HELD_KEY = "execute_end_s_held"
# Well inside the buffer's 1024 samples, and seconds at most behind the run.
HOLD_EXECUTIONS = 256
HOLD_SECONDS = 1.0


class MetricTracker:
    """Counters and timed-metric samples since the last snapshot."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._counters: dict[str, int] = {}
        self._samples_seen = dict.fromkeys((COMPILE_METRIC, *EXECUTE_METRICS), 0)
        self._held = 0  # executions counted whose times are not read yet
        # Executions counted by their lookups that the execution counters have
        # not shown yet (still running when their step ended).
        self._unseen = 0
        # The finish counters' moves in steps that did not wait, given with the
        # next read of the times: they say when executions finished, which
        # varies from step to step and would make every step's event differ.
        self._deferred: dict[str, int] = {}
        self._clock = clock
        self._read_at = clock()

    def delta(self, *, final: bool = False, waited: bool = True) -> dict[str, Any]:
        """The counters that moved, the executions since the last delta and the
        new samples (``final``: read every held sample: no later step will).
        ``waited``: the device has finished everything scheduled so far."""
        names = _XLAC._xla_counter_names()
        value = _XLAC._xla_counter_value
        counters = {name: value(name) or 0 for name in names}
        changed = {
            name: count - self._counters.get(name, 0)
            for name, count in counters.items()
            if count != self._counters.get(name, 0)
        }
        self._counters = counters
        delta: dict[str, Any] = {"counters": changed}
        dynamo = _dynamo_compiled()
        if final or dynamo or COMPILE_COUNTER in changed:
            delta["compile_time_ns"] = [value for _, value in self._new_samples(COMPILE_METRIC)]
        finished = sum(changed.get(name, 0) for name in EXECUTION_COUNTERS)
        if waited:
            executions, self._unseen = max(finished - self._unseen, 0), 0
        else:
            executions = sum(changed.get(name, 0) for name in LOOKUP_COUNTERS)
            self._unseen = max(self._unseen + executions - finished, 0)
            for name in FINISH_COUNTERS:
                if name in changed:
                    self._deferred[name] = self._deferred.get(name, 0) + changed.pop(name)
        delta["executions"] = executions
        if self._can_hold(executions, dynamo, final):
            self._held += executions
            delta["execute_time_ns"] = []
            return delta
        for name, moved in self._deferred.items():
            changed[name] = changed.get(name, 0) + moved
        self._deferred = {}
        samples = [sample for name in EXECUTE_METRICS for sample in self._new_samples(name)]
        self._read_at = self._clock()
        if not waited:
            # Some of this and earlier steps' executions may still run: every
            # time read belongs to a step already counted, in order.
            self._held = max(self._held + executions - len(samples), 0)
            delta["execute_time_ns"] = []
            _put_samples(delta, HELD_KEY, ENDS_HELD_KEY, samples)
            return delta
        held, self._held = min(self._held, len(samples)), 0
        delta["execute_time_ns"] = []
        _put_samples(delta, "execute_time_ns", ENDS_KEY, samples[held:])
        _put_samples(delta, HELD_KEY, ENDS_HELD_KEY, samples[:held])
        return delta

    def _can_hold(self, executions: int, dynamo: bool, final: bool) -> bool:
        if final or dynamo:
            return False
        if self._held + executions >= HOLD_EXECUTIONS:
            return False
        return self._clock() - self._read_at < HOLD_SECONDS

    def _new_samples(self, name: str) -> list[tuple[float, float]]:
        """The samples taken since the last read: (end in seconds, value)."""
        data = _XLAC._xla_metric_data(name)
        if data is None:
            return []
        total, _, samples = data
        new = total - self._samples_seen[name]
        self._samples_seen[name] = total
        return [(end, value) for end, value in samples[len(samples) - min(new, len(samples)) :]]


def _put_samples(
    delta: dict[str, Any], key: str, ends_key: str, samples: list[tuple[float, float]]
) -> None:
    """The samples' values under ``key`` and their ends under ``ends_key``
    (neither when there are none, but ``execute_time_ns``, always present)."""
    if samples or key in delta:
        delta[key] = [value for _, value in samples]
    if samples:
        delta[ends_key] = [end for end, _ in samples]


def _dynamo_compiled() -> bool:
    """torch.compile has compiled a frame: its cached graph runs bump no
    counter (only the timed metric counts them), and torch_xla's bridge
    clears the counters while it partitions a graph: read every step."""
    utils = sys.modules.get("torch._dynamo.utils")
    return utils is not None and bool(utils.counters.get("frames"))


def lookups_count_executions() -> bool:
    """Every execution follows its graph's cache lookup: lazy graphs only.
    A ``torch.compile`` frame's cached runs look nothing up (and its cache
    warm-ups look up without running); in eager mode each op runs on its own."""
    return not _dynamo_compiled() and not _XLAC._get_use_eager_mode()
