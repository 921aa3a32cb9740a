"""The profile summary: frozen dataclasses, saved as ``profile.json`` beside ``report.json``."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROFILE_FILE = "profile.json"


@dataclass(frozen=True)
class StepTimes:
    """Step time over the profiled steps, in seconds."""

    p50: float
    p90: float
    max: float
    mean: float


@dataclass(frozen=True)
class OpTime:
    """One HLO op's time in the profiled window, joined to the optimized HLO."""

    name: str
    time_s: float  # self time: a call's or a loop's own, without the ops inside it
    count: int
    kind: str  # the fusion kind (kLoop, kOutput...) or the opcode
    source: str | None  # file:line from the op's metadata (often a library's)
    graph_hash: str | None
    module: str
    user_line: str | None = None  # file:line in the user's code (xlacli.analysis.profile.op_lines)
    backward: bool = False  # the op differentiates user_line's forward op
    optimizer: bool = False  # the op is the optimizer's update called at user_line


@dataclass(frozen=True)
class LineTime:
    """Device time of the ops at one user line: forward, backward and optimizer."""

    line: str  # file:line
    time_s: float
    forward_s: float
    backward_s: float
    optimizer_s: float = 0.0  # the update an optimizer.step() at this line made


@dataclass(frozen=True)
class GraphTime:
    """One graph's executions in the profiled window."""

    hash: str
    site: str | None
    executions: int
    time_s: float


@dataclass(frozen=True)
class ProfileSummary:
    """What the profiled steps spent their time on."""

    model: str
    device: str
    steps: int  # profiled steps completed
    warmup: int
    step_times_s: tuple[float, ...]
    step_time_s: StepTimes | None
    batch_size: int | None
    samples_per_s: float | None
    # The host timeline (xlacli.analysis.profile.host_timeline): window_s, the host's
    # rows summing to it, and the device's busy, overlap and idle seconds.
    breakdown: dict[str, float]
    top_ops: tuple[OpTime, ...]
    graphs: tuple[GraphTime, ...]
    window_compiles: int  # compiles inside the profiled window (should be 0)
    trace_files: tuple[str, ...]
    logdir: str
    session: str
    run_dir: str
    source_of_op_times: str  # "xprof hlo_stats" or "trace events"
    notes: tuple[str, ...] = field(default_factory=tuple)
    interrupted: bool = False
    # Lazy mode's host time split (xlacli.analysis.profile.host_split): ops traced per
    # step, op tracing vs the user's Python, tracing's share of the host time.
    host_split: dict[str, float] = field(default_factory=dict)
    tracing_advice: str | None = None  # set when lazy tracing dominates the host time
    mode: str = "lazy"  # "dynamo": the steps ran under torch.compile
    lines: tuple[LineTime, ...] = ()  # the user lines costing the most device time
    line_share: float | None = None  # share of the ops' device time at a user line
    stood_aside: str | None = None  # the script's own profiler call; xlacli did not trace
    compare_command: str | None = None  # lazy vs torch.compile, as a user types it (model files)


def summary_to_dict(summary: ProfileSummary) -> dict[str, Any]:
    """The JSON form."""
    return dataclasses.asdict(summary)


def dump_summary(summary: ProfileSummary) -> str:
    """JSON with sorted keys."""
    return json.dumps(summary_to_dict(summary), indent=2, sort_keys=True) + "\n"


def load_summary(run_dir: Path) -> ProfileSummary | None:
    """The profile summary saved in a run folder, or None for a run that was not profiled."""
    path = run_dir / PROFILE_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    times = data.get("step_time_s")
    return ProfileSummary(
        **{
            **data,
            "step_times_s": tuple(data.get("step_times_s", ())),
            "step_time_s": StepTimes(**times) if times else None,
            "top_ops": tuple(OpTime(**op) for op in data.get("top_ops", ())),
            "graphs": tuple(GraphTime(**graph) for graph in data.get("graphs", ())),
            "lines": tuple(LineTime(**line) for line in data.get("lines", ())),
            "trace_files": tuple(data.get("trace_files", ())),
            "notes": tuple(data.get("notes", ())),
            "run_dir": str(run_dir.resolve()),
        }
    )


def save_summary(summary: ProfileSummary, run_dir: Path) -> Path:
    """Write ``profile.json`` into the run folder."""
    path = run_dir / PROFILE_FILE
    path.write_text(dump_summary(summary), encoding="utf-8")
    return path
