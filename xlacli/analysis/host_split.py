"""Where a profile's host time goes in lazy mode: tracing torch ops onto XLA
tensors (every step, again) versus the user's own Python.

The child measures each step's op tracing with torch_xla's ``LazyTracing``
timer (``xlacli.child.host_time``); the trace's breakdown gives the host's
"Python and the rest", which contains that tracing. The difference is the
user's Python and the framework around it.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from typing import Any

# Op tracing plus the sync's lowering at or above this share of the host's
# time: the step is dominated by lazy tracing, the cost torch.compile removes.
TRACING_DOMINATES = 0.5
HOST_KEYS = ("python_s", "tracing_s", "compile_s", "host_to_device_s", "device_to_host_s")


def host_split(
    traced_steps: Iterable[Mapping[str, Any]], breakdown: Mapping[str, float]
) -> dict[str, float]:
    """``ops_per_step`` (median), ``op_tracing_s`` and ``user_python_s`` (the
    window's), ``tracing_share`` of the host time; ``{}`` without measurements."""
    traced = [event.get("op_tracing") or {"ops": 0, "time_ns": 0.0} for event in traced_steps]
    if not traced or not breakdown:
        return {}
    op_tracing_s = sum(t.get("time_ns", 0.0) for t in traced) / 1e9
    host_s = sum(breakdown.get(key, 0.0) for key in HOST_KEYS)
    python_s = breakdown.get("python_s", 0.0)
    return {
        "ops_per_step": float(statistics.median(t.get("ops", 0) for t in traced)),
        "op_tracing_s": op_tracing_s,
        "op_tracing_per_step_s": op_tracing_s / len(traced),
        "user_python_s": max(python_s - op_tracing_s, 0.0),
        "tracing_share": (op_tracing_s + breakdown.get("tracing_s", 0.0)) / host_s
        if host_s > 0
        else 0.0,
    }


def tracing_note(split: Mapping[str, float], mode: str, model: str) -> str | None:
    """When lazy tracing dominates the host time, say so and what to measure next."""
    if mode != "lazy" or split.get("tracing_share", 0.0) < TRACING_DOMINATES:
        return None
    return (
        f"lazy tracing is {split['tracing_share']:.0%} of the host time: "
        f"{split['ops_per_step']:.0f} torch ops are traced again every step; "
        "torch.compile(backend='openxla') traces once: measure it with "
        f"`xlacli profile {model} --mode both`"
    )
