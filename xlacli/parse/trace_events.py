"""The profiler's trace events (``*.trace.json.gz``, Chrome trace format).

Complete events (``ph: X``) carry a start and a duration in microseconds;
metadata events name the threads. torch_xla's client work (``StepMarker``,
``PjRtComputationClient::ExecuteComputation``, transfers, compiles), the
``StepTrace`` annotations and, on XLA:CPU, each HLO op (``args.hlo_op``,
``args.hlo_module``) are all there.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TraceEvent:
    """One complete event, times in seconds from the trace's origin."""

    name: str
    start_s: float
    duration_s: float
    thread: str
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def end_s(self) -> float:
        return self.start_s + self.duration_s


def parse_trace_events(data: dict[str, Any]) -> list[TraceEvent]:
    """The complete events of a Chrome trace, sorted by start time."""
    threads = {
        (event.get("pid"), event.get("tid")): event.get("args", {}).get("name", "")
        for event in data.get("traceEvents", [])
        if event.get("ph") == "M" and event.get("name") == "thread_name"
    }
    events = [
        TraceEvent(
            name=str(event.get("name", "")),
            start_s=float(event.get("ts", 0.0)) / 1e6,
            duration_s=float(event.get("dur", 0.0)) / 1e6,
            thread=threads.get((event.get("pid"), event.get("tid")), ""),
            args=dict(event.get("args") or {}),
        )
        for event in data.get("traceEvents", [])
        if event.get("ph") == "X"
    ]
    return sorted(events, key=lambda event: event.start_s)


def read_trace_file(path: Path) -> list[TraceEvent]:
    """Read a ``.trace.json.gz`` (or plain ``.json``) file."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return parse_trace_events(json.load(handle))
