"""The ``PT_XLA_DEBUG_LEVEL=2`` log (``PT_XLA_DEBUG_FILE``).

torch_xla writes one "Compilation Analysis" block per compile (followed by a
``Computation hash`` line and a "Post Compilation Analysis" block) and one
"Execution Analysis" block per graph execution, in the order they happen.

xlacli's child folds what repeats (``child/debug_log_repeats.py``): when a
step appends the same bytes as the step before it, those blocks are cut and
counted in one line after the last copy kept, ``Repeated Analysis: the last
N blocks, M more times``; the parser repeats those N events M times, so the
events are the same as from the unfolded log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xlacli.parse.frames import Frame, parse_frame, without_our_wrappers

_PREFIXES = {
    "Compilation Analysis: ": "compile",
    "Execution Analysis: ": "execute",
    "Post Compilation Analysis: ": "post_compile",
}
_COMPUTATION_HASH = re.compile(r"^Computation hash: ([0-9a-f]+)\s*$")
_GRAPH_HASH = re.compile(r"^\s*Graph Hash: ([0-9a-f]+)")
_COUNT = re.compile(r"^\s*Number of Graph (Inputs|Outputs): (\d+)")
_SIZE = re.compile(r"^(.+?) size: ([0-9.]+) GB")
_REPEATED = re.compile(r"^Repeated Analysis: the last (\d+) blocks, (\d+) more times$")
_BLOCK_TITLES = ("Compilation Cause", "Execution Cause")


def repeat_line(blocks: int, times: int) -> str:
    """The line that stands for ``times`` more copies of the last ``blocks`` blocks."""
    return f"Repeated Analysis: the last {blocks} blocks, {times} more times\n"


@dataclass(frozen=True)
class AnalysisEvent:
    """One compile or one execution, as torch_xla's debug analysis reports it."""

    kind: str  # "compile" or "execute"
    cause: str  # "user torch_xla.sync", "most likely user code trying to access ..."
    graph_hash: str | None
    inputs: int | None
    outputs: int | None
    frames: tuple[Frame, ...]  # innermost first
    computation_hash: str | None = None
    # "Graph input", "Graph output", "Aliased Input", "Intermediate tensor",
    # "Compiled program" sizes in bytes (torch_xla prints GB with 6 decimals).
    sizes: dict[str, int] = field(default_factory=dict)


@dataclass
class _Builder:
    kind: str
    cause: list[str] = field(default_factory=list)
    graph_hash: str | None = None
    inputs: int | None = None
    outputs: int | None = None
    frames: list[Frame] = field(default_factory=list)
    computation_hash: str | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    section: str = ""

    def build(self, shared: _Shared) -> AnalysisEvent:
        frames = without_our_wrappers(tuple(self.frames))
        return AnalysisEvent(
            self.kind,
            " ".join(self.cause).strip(),
            self.graph_hash,
            self.inputs,
            self.outputs,
            shared.frames.setdefault(frames, frames),
            self.computation_hash,
            dict(self.sizes),
        )


@dataclass
class _Shared:
    """One object per distinct frame line and frame list: a run of 10,000 steps
    repeats the same 64 frames at every execution, and the parent's memory
    should grow with distinct graphs, not with steps."""

    lines: dict[str, Frame | None] = field(default_factory=dict)
    frames: dict[tuple[Frame, ...], tuple[Frame, ...]] = field(default_factory=dict)

    def frame(self, body: str) -> Frame | None:
        if body not in self.lines:
            self.lines[body] = parse_frame(body)
        return self.lines[body]


def parse_debug_log(text: str) -> list[AnalysisEvent]:
    """Parse the compile and execute events of a PT_XLA_DEBUG log, in order."""
    events: list[AnalysisEvent] = []
    current: _Builder | None = None
    shared = _Shared()
    for line in text.splitlines():
        if (repeated := _REPEATED.match(line)) is not None:
            if current is not None:
                events.append(current.build(shared))
                current = None
            _repeat(events, int(repeated.group(1)), int(repeated.group(2)))
            continue
        kind, body = _split_prefix(line)
        if kind is None:
            match = _COMPUTATION_HASH.match(line)
            if match and current is not None and current.kind == "compile":
                current.computation_hash = match.group(1)
            continue
        if kind == "post_compile":
            if current is not None and current.kind == "compile":
                _read_size(current, body)
            continue
        if body.strip() in _BLOCK_TITLES:
            if current is not None:
                events.append(current.build(shared))
            current = _Builder(kind, section="cause")
            continue
        if current is not None:
            _read_line(current, body, shared)
    if current is not None:
        events.append(current.build(shared))
    return events


def _repeat(events: list[AnalysisEvent], blocks: int, times: int) -> None:
    """The last ``blocks`` events, ``times`` more times (the same objects: a
    10,000-step run holds one copy of its step's events, not 10,000)."""
    if 0 < blocks <= len(events):
        events.extend(events[-blocks:] * times)


def _split_prefix(line: str) -> tuple[str | None, str]:
    for prefix, kind in _PREFIXES.items():
        if line.startswith(prefix):
            return kind, line[len(prefix) :]
    return None, line


def _read_line(event: _Builder, body: str, shared: _Shared) -> None:
    stripped = body.strip()
    if stripped.startswith("Graph Info:"):
        event.section = "graph"
    elif stripped.startswith("Python Frame Triggered Execution:"):
        event.section = "frames"
    elif stripped.startswith(("=====", "-----")):
        event.section = ""
    elif event.section == "cause":
        event.cause.append(stripped)
    elif event.section == "graph":
        if (match := _GRAPH_HASH.match(body)) is not None:
            event.graph_hash = match.group(1)
        elif (match := _COUNT.match(body)) is not None:
            setattr(event, match.group(1).lower(), int(match.group(2)))
    elif event.section == "frames" and (frame := shared.frame(body)) is not None:
        event.frames.append(frame)


def _read_size(event: _Builder, body: str) -> None:
    match = _SIZE.match(body.strip())
    if match:
        event.sizes[match.group(1)] = round(float(match.group(2)) * 1e9)
