"""Lazy mode's cost on the host: how many torch ops each step traces onto XLA
tensors, and whether that tracing (with the sync that builds the graph)
dominates the profiled window.

The child measures each step's op tracing with torch_xla's ``LazyTracing``
timer (``xlacli.child.host_time``); the host timeline
(``xlacli.analysis.profile.host_timeline``) places it among the window's other rows.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping

from xlacli.run_folder.step_events import StepEvent

# Op tracing plus the sync's graph building at or above this share of the
# window: the step is dominated by lazy tracing, the cost torch.compile removes.
TRACING_DOMINATES = 0.5


def op_tracing_s(traced_steps: Iterable[StepEvent]) -> float:
    """The traced steps' op tracing, in seconds."""
    return sum((e.measures.op_tracing or {}).get("time_ns", 0.0) for e in traced_steps) / 1e9


def host_split(
    traced_steps: Iterable[StepEvent], timeline: Mapping[str, float]
) -> dict[str, float]:
    """``ops_per_step`` (median), ``op_tracing_s`` and ``user_python_s`` (the
    window's), ``tracing_share`` of the window; ``{}`` without measurements."""
    traced = [e.measures.op_tracing or {"ops": 0, "time_ns": 0.0} for e in traced_steps]
    window = timeline.get("window_s", 0.0)
    if not traced or window <= 0:
        return {}
    tracing = timeline.get("op_tracing_s", 0.0)
    return {
        "ops_per_step": float(statistics.median(t.get("ops", 0) for t in traced)),
        "op_tracing_s": tracing,
        "op_tracing_per_step_s": tracing / len(traced),
        "user_python_s": timeline.get("python_s", 0.0),
        "tracing_share": (tracing + timeline.get("graph_s", 0.0)) / window,
    }


def tracing_note(split: Mapping[str, float], mode: str, command: str | None) -> str | None:
    """When lazy tracing dominates the window, say so and what to measure next
    (``command``: the comparison to run, None for a script, which xlacli
    cannot put under torch.compile itself)."""
    if mode != "lazy" or split.get("tracing_share", 0.0) < TRACING_DOMINATES:
        return None
    text = (
        f"tracing torch ops and building the graph take {split['tracing_share']:.0%} of the "
        f"window: {split['ops_per_step']:.0f} torch ops are traced again every step; "
        "torch.compile(backend='openxla') traces once"
    )
    if command is None:
        return text + ": call it in the script on the step's model and profile again"
    return text + f": measure it with\n{command}"
