"""One timeline of the host over the profiled window: each millisecond in
exactly one row, the rows summing to the window, the device's time beside it.

The host's trace events on the thread that runs the steps nest (a step holds
the sync, the sync holds its barrier and transfers): at every instant the
innermost event open says what the host is doing, and its kind (or the kind
of the nearest enclosing event that has one) is the row. Python inside a
step is split once more with the child's own measure of torch's op tracing
(``LazyTracing``), which no trace event marks. Host time outside every event
is xlacli's own bookkeeping between steps, or, after the last step, the
window waiting for the last graph to finish.

Device time is the union of the HLO op events and the executor's runs (the
device busy), with the part the host spent on other work said in seconds:
the overlap that lazy execution buys.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from xlacli.analysis.profile.intervals import Interval, intersect_total, union
from xlacli.analysis.profile.summary import (
    COMPILE,
    EXECUTE,
    EXECUTE_REPLICATED,
    FROM_DEVICE,
    TO_DEVICE,
    ProfiledStep,
)
from xlacli.parse.trace_events import TraceEvent

# The host's rows, in the order a step lives them; their seconds sum to window_s.
HOST_ROWS = (
    "python_s",  # the user's Python and the framework around it
    "op_tracing_s",  # torch dispatching each op onto XLA tensors (LazyTracing)
    "graph_s",  # the sync: collecting the graph, hashing, lowering, launching
    "device_wait_s",  # the host blocked until the device is done
    "transfer_s",  # copies between host and device memory
    "compile_s",  # XLA compiling a graph
    "harness_s",  # xlacli's own bookkeeping between steps
)
_SYNC_PREFIXES = ("StepMarker", "SyncTensors", "SyncLiveTensors", "ScheduleSyncTensors", "XLAGraph")
_SYNC_NAMES = frozenset(
    {"CollectSyncTensors", "ExtractIRAndPrepareXlaData_", "RunPostOrder", "SetTensorData"}
)
_EXECUTOR = "ThunkExecutor::Execute"
_WAIT_PREFIXES = ("Wait for", "TensorCollectionBarrier", "ThunkExecutor::Execute")
# Launching a graph blocks until the device can take it (the previous graph's
# buffers): the part of the launch while the device runs is waiting for it.
_LAUNCH = "ScheduleSyncTensorsGraph"
# Rows whose time while the device is busy is the host waiting for it: a read
# from the device waits for the graph that makes the value, a launch for the last.
_BLOCKING = {"read": "transfer_s", "launch": "graph_s"}


def event_row(name: str, step_name: str) -> str | None:
    """The host row an event's own time belongs to (``launch`` and ``read``:
    split with waiting, ``_BLOCKING``); None: its parent's."""
    if name == step_name:
        return "python_s"
    if name == COMPILE:
        return "compile_s"
    if name == TO_DEVICE:
        return "transfer_s"
    if name == FROM_DEVICE:
        return "read"
    if name.startswith(_WAIT_PREFIXES) or name in (EXECUTE, EXECUTE_REPLICATED):
        return "device_wait_s"
    if name == _LAUNCH:
        return "launch"
    if name in _SYNC_NAMES or name.startswith(_SYNC_PREFIXES):
        return "graph_s"
    return None


def device_busy(events: Iterable[TraceEvent], host_thread: str) -> list[Interval]:
    """When the device is busy: the union of the HLO op events and, on
    XLA:CPU, of its executor's runs on its own threads (the work between ops)."""
    return union(
        (e.start_s, e.end_s)
        for e in events
        if "hlo_op" in e.args or (e.name == _EXECUTOR and e.thread != host_thread)
    )


def host_timeline(
    events: Sequence[TraceEvent],
    steps: Sequence[ProfiledStep],
    step_name: str,
    op_tracing_s: float,
) -> dict[str, float]:
    """Seconds of each host row in the window, and the device beside them.

    Keys: ``window_s``, the ``HOST_ROWS`` (summing to ``window_s``),
    ``device_busy_s`` (the union of op events), ``overlap_s`` (device busy
    while the host did anything but wait for it) and ``device_idle_s``.
    """
    if not steps:
        return {}
    start, end = steps[0].start_s, steps[-1].end_s
    marks = [e for e in events if e.name == step_name and start <= e.start_s <= end]
    thread = marks[0].thread if marks else ""
    host = [
        e
        for e in events
        if e.thread == thread and "hlo_op" not in e.args and e.end_s > start and e.start_s < end
    ]
    busy = [
        (max(a, start), min(b, end))
        for a, b in device_busy(events, thread)
        if b > start and a < end
    ]
    last_mark_end = max((e.end_s for e in marks), default=start)
    rows = dict.fromkeys(HOST_ROWS, 0.0)
    waits: list[Interval] = []
    read_waits = 0.0
    for (a, b), row in _innermost_rows(host, start, end, step_name):
        if row is None:
            row = "device_wait_s" if a >= last_mark_end else "harness_s"
        if row in _BLOCKING:
            waited = intersect_total([(a, b)], busy)
            rows["device_wait_s"] += waited
            read_waits += waited if row == "read" else 0.0
            rows[_BLOCKING[row]] += (b - a) - waited
            if waited:
                waits.append((a, b))
            continue
        rows[row] += b - a
        if row == "device_wait_s":
            waits.append((a, b))
    # LazyTracing times an op's whole dispatch: a `.to(device)` or an `.item()`
    # holds its transfer (and the wait before a read), already in their rows.
    inside_ops = rows["transfer_s"] + read_waits
    traced = min(max(op_tracing_s - inside_ops, 0.0), rows["python_s"])
    rows["op_tracing_s"] += traced
    rows["python_s"] -= traced
    busy_s = sum(b - a for a, b in busy)
    window = end - start
    return {
        "window_s": window,
        **rows,
        "device_busy_s": busy_s,
        "overlap_s": busy_s - intersect_total(busy, union(waits)),
        "device_idle_s": max(window - busy_s, 0.0),
    }


def _innermost_rows(
    host: Sequence[TraceEvent], start: float, end: float, step_name: str
) -> list[tuple[Interval, str | None]]:
    """The window cut where host events open and close, each piece with the
    row of the innermost open event (None: no event open)."""
    ordered = sorted(host, key=lambda e: (e.start_s, -e.duration_s))
    points = sorted(
        {start, end, *(max(start, min(end, t)) for e in host for t in (e.start_s, e.end_s))}
    )
    pieces: list[tuple[Interval, str | None]] = []
    stack: list[tuple[float, str | None]] = []  # (end, row) of the open events
    index = 0
    for a, b in itertools.pairwise(points):
        while stack and stack[-1][0] <= a:
            stack.pop()
        while index < len(ordered) and ordered[index].start_s <= a:
            event = ordered[index]
            index += 1
            if event.end_s <= a:
                continue
            while stack and stack[-1][0] < event.end_s:  # not nested: the trace's rounding
                stack.pop()
            own = event_row(event.name, step_name)
            # An event of no known kind is the user's (their own annotations).
            inherited = stack[-1][1] if stack else "python_s"
            stack.append((event.end_s, own or inherited))
        pieces.append(((a, b), stack[-1][1] if stack else None))
    return pieces
