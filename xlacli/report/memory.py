"""The report's memory, precision and checkpointing facts: frozen dataclasses.

They hang off ``GraphRecord`` (``memory``, ``precision``, ``checkpoint``) and
``RunReport`` (``memory``); ``xlacli.analysis.memory.peaks``, ``.precision`` and
``.checkpointing`` compute them from a run folder's kept files. Loading reads
every key with a default, as ``report.py`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class BufferRecord:
    """One buffer live at a graph's peak."""

    name: str  # the HLO value: ``dot.349{}``
    bytes: int
    shape: str  # ``f32[8,64,64]``, without the layout
    role: str  # "argument", "output", "temporary" or "constant"
    op: str = ""  # torch_xla's op that made it (``aten__mm``), from the HLO metadata
    source: str | None = None  # the user's ``/abs/file.py:line`` (else the metadata's)
    library_source: str | None = None  # the library line the metadata names, when walked


@dataclass(frozen=True)
class GraphMemory:
    """What XLA's buffer assignment says one graph needs.

    ``peak_bytes`` is the live set at the peak of XLA's heap simulation
    (arguments, outputs and temporaries live at that point); ``total_bytes``
    every allocation of the program, which XLA:CPU holds for the whole run.
    """

    peak_bytes: int
    peak_temp_bytes: int  # the temporaries in that live set
    peak_at: str | None  # the instruction scheduled at the peak
    peak_site: str | None  # its source line
    total_bytes: int | None
    biggest: tuple[BufferRecord, ...] = ()
    peak_library_site: str | None = None  # the library line, when peak_site is the user's


@dataclass(frozen=True)
class PrecisionMix:
    """Instructions, result bytes and matmul FLOPs by element type, of one HLO module."""

    instructions: Mapping[str, int] = field(default_factory=dict)
    bytes: Mapping[str, int] = field(default_factory=dict)
    dot_flops: Mapping[str, int] = field(default_factory=dict)  # by the operands' type

    @property
    def total_dot_flops(self) -> int:
        return sum(self.dot_flops.values())

    def dot_share(self, element_type: str) -> float:
        """The fraction of dot and convolution FLOPs computed in ``element_type``."""
        total = self.total_dot_flops
        return self.dot_flops.get(element_type, 0) / total if total else 0.0


@dataclass(frozen=True)
class GraphPrecision:
    """The precision mix as torch_xla asked for it, and as XLA compiled it."""

    requested: PrecisionMix  # hlo.before.txt
    optimized: PrecisionMix | None  # hlo.after.txt
    autocast: str | None = None  # "xla:bf16" when autocast was on in the graph's first step
    # Where the requested f64 instructions come from (file:line of their metadata),
    # so that a warning names the line, and says when it is a library's own.
    f64_sources: tuple[str, ...] = ()
    # The user's line each library f64 source was called from (optimizer.step()).
    f64_user_lines: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckpointFacts:
    """Gradient checkpointing as the HLO shows it."""

    opt_barriers: int  # in the program torch_xla emitted
    opt_barriers_optimized: int | None  # left after XLA's optimizations
    recomputed_regions: int  # barriers followed by a recomputed matmul
    recomputed_dots: int  # matmuls recomputed after a barrier
    recomputed_dots_kept: int | None  # of those, how many XLA kept


@dataclass(frozen=True)
class StepMemory:
    """A step's peak: the peaks of the graphs it ran, summed; ``steps`` consecutive
    steps from ``step`` that ran the same graphs share one record."""

    step: int
    graphs: tuple[str, ...]
    peak_bytes: int
    steps: int = 1


@dataclass(frozen=True)
class RunMemory:
    """Memory facts of the whole run.

    ``device`` holds what the runtime's ``xm.get_memory_info`` returned after
    each step (``bytes_used``, ``peak_bytes_used``, ``bytes_limit``...);
    ``device_unavailable`` says why there is none (XLA:CPU has no allocator stats).
    """

    steps: tuple[StepMemory, ...] = ()
    device: Mapping[int, Mapping[str, int]] = field(default_factory=dict)
    device_unavailable: str | None = None
    # step -> "xla:bf16" where it changed, in the steps the child watched ("": off);
    # device: the first step's, the peak step's and the last step's (analysis/memory/peaks.py)
    autocast: Mapping[int, str] = field(default_factory=dict)

    @property
    def peak_step(self) -> StepMemory | None:
        return max(self.steps, key=lambda step: step.peak_bytes, default=None)


def graph_memory_from_dict(data: Any) -> GraphMemory | None:
    if not isinstance(data, dict):
        return None
    return GraphMemory(
        peak_bytes=data.get("peak_bytes", 0),
        peak_temp_bytes=data.get("peak_temp_bytes", 0),
        peak_at=data.get("peak_at"),
        peak_site=data.get("peak_site"),
        total_bytes=data.get("total_bytes"),
        biggest=tuple(_buffer_from_dict(b) for b in data.get("biggest", ())),
        peak_library_site=data.get("peak_library_site"),
    )


def _buffer_from_dict(data: dict[str, Any]) -> BufferRecord:
    return BufferRecord(
        name=data.get("name", ""),
        bytes=data.get("bytes", 0),
        shape=data.get("shape", ""),
        role=data.get("role", ""),
        op=data.get("op", ""),
        source=data.get("source"),
        library_source=data.get("library_source"),
    )


def graph_precision_from_dict(data: Any) -> GraphPrecision | None:
    if not isinstance(data, dict):
        return None
    return GraphPrecision(
        requested=_mix_from_dict(data.get("requested")) or PrecisionMix(),
        optimized=_mix_from_dict(data.get("optimized")),
        autocast=data.get("autocast"),
        f64_sources=tuple(data.get("f64_sources", ())),
        f64_user_lines=dict(data.get("f64_user_lines", {})),
    )


def _mix_from_dict(data: Any) -> PrecisionMix | None:
    if not isinstance(data, dict):
        return None
    return PrecisionMix(
        instructions=dict(data.get("instructions", {})),
        bytes=dict(data.get("bytes", {})),
        dot_flops=dict(data.get("dot_flops", {})),
    )


def checkpoint_from_dict(data: Any) -> CheckpointFacts | None:
    if not isinstance(data, dict):
        return None
    return CheckpointFacts(
        opt_barriers=data.get("opt_barriers", 0),
        opt_barriers_optimized=data.get("opt_barriers_optimized"),
        recomputed_regions=data.get("recomputed_regions", 0),
        recomputed_dots=data.get("recomputed_dots", 0),
        recomputed_dots_kept=data.get("recomputed_dots_kept"),
    )


def run_memory_from_dict(data: Any) -> RunMemory | None:
    if not isinstance(data, dict):
        return None
    return RunMemory(
        steps=tuple(
            StepMemory(
                s.get("step", 0),
                tuple(s.get("graphs", ())),
                s.get("peak_bytes", 0),
                s.get("steps", 1),
            )
            for s in data.get("steps", ())
        ),
        # JSON keys are strings; steps are ints again once loaded.
        device={int(step): dict(info) for step, info in data.get("device", {}).items()},
        device_unavailable=data.get("device_unavailable"),
        autocast={int(step): str(kind) for step, kind in data.get("autocast", {}).items()},
    )
