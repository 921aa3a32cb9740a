"""The host's rows over a hand-built trace: each millisecond in one row, the
device beside them with the overlap in seconds."""

import pytest

from xlacli.analysis.profile.host_timeline import HOST_ROWS, host_timeline
from xlacli.analysis.profile.intervals import intersect_total, union
from xlacli.analysis.profile.summary import profiled_steps
from xlacli.parse.trace_events import TraceEvent

MS = 0.001


def host(name, start_ms, duration_ms, **args):
    return TraceEvent(name, start_ms * MS, duration_ms * MS, "python", args)


def device(op, start_ms, duration_ms):
    return TraceEvent(op, start_ms * MS, duration_ms * MS, "tf_XLAEigen/1", {"hlo_op": op})


def trace():
    """Two steps of 10 ms. Step 5: 6 ms of Python, a 3 ms sync whose launch
    waits 1 ms for the device, 1 ms of xlacli between steps. Step 6: Python,
    then a read of the loss that waits 2 ms for the graph, then 1 ms of copy."""
    return [
        host("xlacli_step", 0, 9, step_num=5),
        host("StepMarker", 6, 3),
        host("SyncTensorsGraph", 6, 3),
        host("ScheduleSyncTensorsGraph", 7, 2),
        device("dot.1", 8, 4),  # runs under the launch's last ms and into step 6
        host("xlacli_step", 10, 10, step_num=6),
        host("PjRtComputationClient::TransferToDevice", 10, 0.5),
        host("PjRtComputationClient::TransferFromDevice", 17, 3),
        device("dot.2", 17, 2),
    ]


def test_rows_sum_to_the_window_each_ms_once():
    events = trace()
    # LazyTracing's 7.5 ms hold the `.to(device)` and the `.item()`: 3.5 ms.
    timeline = host_timeline(events, profiled_steps(events, "xlacli_step"), "xlacli_step", 0.0075)
    assert timeline["window_s"] == pytest.approx(0.020)
    assert sum(timeline[row] for row in HOST_ROWS) == pytest.approx(timeline["window_s"])
    assert timeline["graph_s"] == pytest.approx(0.002)  # the sync, less the launch's wait
    assert timeline["device_wait_s"] == pytest.approx(0.003)  # 1 ms launching, 2 ms reading
    assert timeline["transfer_s"] == pytest.approx(0.0015)  # to device, then the read's copy
    assert timeline["harness_s"] == pytest.approx(0.001)  # between the steps
    assert timeline["op_tracing_s"] == pytest.approx(0.004)  # LazyTracing, less what it holds
    assert timeline["python_s"] == pytest.approx(0.0125 - 0.004)


def test_device_beside_the_host_in_seconds():
    events = trace()
    timeline = host_timeline(events, profiled_steps(events, "xlacli_step"), "xlacli_step", 0.0)
    assert timeline["device_busy_s"] == pytest.approx(0.006)
    # dot.1 ran 1 ms under the waiting launch and 3 ms while the host worked on;
    # dot.2 ran entirely while the host waited for it.
    assert timeline["overlap_s"] == pytest.approx(0.003)
    assert timeline["device_idle_s"] == pytest.approx(0.014)


def test_no_steps_no_timeline():
    assert host_timeline([], [], "xlacli_step", 0.0) == {}


def test_intervals():
    assert union([(3, 4), (0, 1), (0.5, 2), (5, 5)]) == [(0, 2), (3, 4)]
    assert intersect_total([(0, 2), (3, 4)], [(1, 3.5)]) == pytest.approx(1.5)
