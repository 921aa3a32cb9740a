import pytest

from xlacli.analysis.profile.summary import (
    CompiledModule,
    InstructionIndex,
    batch_size,
    graph_times,
    op_times_from_trace,
    profiled_steps,
    step_times,
    top_ops,
)
from xlacli.hlo import parse_hlo
from xlacli.parse.trace_events import TraceEvent, parse_trace_events

HLO = """HloModule SyncTensorsGraph.7

%fused (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  ROOT %r = f32[4]{0} maximum(%p, %p)
}

ENTRY %main (a: f32[4]) -> f32[4] {
  %a = f32[4]{0} parameter(0), metadata={source_file="/u/m.py" source_line=3}
  %dot.1 = f32[4]{0} multiply(%a, %a), metadata={op_type="aten__mul" source_file="/u/m.py" source_line=5}
  ROOT %f = f32[4]{0} fusion(%dot.1), kind=kLoop, calls=%fused, metadata={source_file="/u/m.py" source_line=6}
}
"""


def event(name, start, duration, **args):
    return TraceEvent(name, start, duration, "python", args)


def trace():
    return [
        event("xlacli_step", 0.0, 0.004, step_num=5),
        event("SyncTensorsGraph", 0.001, 0.002),
        event("PjRtComputationClient::TransferToDevice", 0.0005, 0.0002),
        event("PjRtComputationClient::ExecuteComputation", 0.003, 0.001),
        event("dot.1", 0.0031, 0.0006, hlo_op="dot.1", hlo_module="SyncTensorsGraph.7"),
        event("f", 0.0037, 0.0001, hlo_op="f", hlo_module="SyncTensorsGraph.7"),
        event("xlacli_step", 0.010, 0.004, step_num=6),
        event("dot.1", 0.0111, 0.0004, hlo_op="dot.1", hlo_module="SyncTensorsGraph.7"),
    ]


def test_steps_cut_the_window_and_last_as_annotated():
    steps = profiled_steps(trace(), "xlacli_step")
    assert [(s.step, s.start_s, s.end_s) for s in steps] == [(5, 0.0, 0.010), (6, 0.010, 0.014)]
    times = step_times(steps)  # the annotations, as xprof's overview page reads steps
    assert times is not None and times.max == pytest.approx(0.004)
    assert times.p50 == pytest.approx(0.004)


def test_top_ops_are_joined_to_the_hlo():
    modules = [CompiledModule("hash1", parse_hlo(HLO), executed_in_window=True)]
    ops = top_ops(op_times_from_trace(trace()), InstructionIndex(modules))
    assert [(o.name, o.kind, o.count, o.source, o.graph_hash) for o in ops] == [
        ("dot.1", "multiply", 2, "/u/m.py:5", "hash1"),
        ("f", "kLoop", 1, "/u/m.py:6", "hash1"),
    ]
    assert ops[0].time_s == pytest.approx(0.001)


def test_graph_times_and_batch():
    graphs = graph_times([("a", 0.5), ("b", 2.0), ("a", 0.5)], {"a": "m.py:1"}.get)
    assert [(g.hash, g.executions, g.time_s, g.site) for g in graphs] == [
        ("b", 1, 2.0, None),
        ("a", 2, 1.0, "m.py:1"),
    ]
    assert batch_size(["input 0 f32[8,64]"]) == 8
    assert batch_size(["input 0 int 3", "input 1 s64[4,16]"]) == 4
    assert batch_size([]) is None


def test_chrome_trace_parsing():
    data = {
        "traceEvents": [
            {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "python"}},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 10.0, "dur": 5.0, "name": "b"},
            {"ph": "X", "pid": 1, "tid": 2, "ts": 1.0, "dur": 2.0, "name": "a", "args": {"k": 1}},
            {"ph": "i", "pid": 1, "tid": 2, "ts": 1.0, "name": "instant"},
        ]
    }
    events = parse_trace_events(data)
    assert [(e.name, e.start_s, e.duration_s, e.thread) for e in events] == [
        ("a", 1e-6, 2e-6, "python"),
        ("b", 1e-5, 5e-6, "python"),
    ]


def test_a_call_counts_its_own_time_not_its_callees():
    """On XLA:CPU a call's event holds its fusion's: each millisecond once."""
    events = [
        event("call.6", 0.0, 0.010, hlo_op="call.6", hlo_module="m"),
        event("fusion.1", 0.001, 0.007, hlo_op="fusion.1", hlo_module="m"),
        event("add.2", 0.002, 0.001, hlo_op="add.2", hlo_module="m"),
        event("dot.3", 0.011, 0.002, hlo_op="dot.3", hlo_module="m"),
    ]
    times = {op: seconds for _, op, seconds, _ in op_times_from_trace(events)}
    assert times == pytest.approx(
        {"call.6": 0.003, "fusion.1": 0.006, "add.2": 0.001, "dot.3": 0.002}
    )
    assert sum(times.values()) == pytest.approx(0.012)  # the ops' busy time, not 0.020
