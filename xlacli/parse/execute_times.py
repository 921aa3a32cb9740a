"""Each execution's own time on its device, from torch_xla's ``ExecuteTime``.

torch_xla times an execution from its dispatch to its end. A step that does
not wait for its device (``child/metric_deltas.py``) dispatches the next
graph while the last one still runs, so the next sample holds the wait behind
it too: summed, the samples count the same device time many times over (a run
of 628 s summed to 7,479 s). A device runs one program at a time, so an
execution's own time starts at the later of its dispatch and the end of the
execution before it; the times so taken sum to the time the device was busy,
never more than the run's wall time.
"""

from __future__ import annotations

from collections.abc import Sequence


def device_times(durations_s: Sequence[float], ends_s: Sequence[float]) -> list[float]:
    """Each execution's time on the device, in the samples' order.

    Args:
        durations_s: each execution's ``ExecuteTime`` sample (dispatch to end), seconds.
        ends_s: when each ended (the sample's timestamp), seconds, same order.

    Returns:
        Each execution's time from the later of its dispatch and the end of
        every execution before it, to its end (0.0 when those had covered it).
    """
    busy_until = float("-inf")
    own = []
    for duration, end in zip(durations_s, ends_s, strict=True):
        start = max(end - duration, busy_until)
        own.append(max(end - start, 0.0))
        busy_until = max(busy_until, end)
    return own
