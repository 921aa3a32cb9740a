"""XLA's memory figures: ``*-memory-usage-report.txt`` and the live ranges of a buffer assignment.

XLA prints the peak of its heap simulation at the end of the buffer
assignment (``HloLiveRange``)::

    HloLiveRange (max 936):
      InstructionSequence:
        0:p0.4
        ...
      Live ranges at 402 (peak):
        dot.349{}: 524288 bytes (cumulative: 524288 bytes)
        ...
      Stack trace breakdown for peak usage: 13 902 888 bytes

and every allocation lists the values it holds, with their shapes::

    allocation 604: size 13385728, preallocated-temp:
     value: <1463 concatenate.937.clone @0> (size=393216,offset=6291456): f32[8,64,192]{2,1,0}

The memory-usage report starts with ``Total bytes used: 15919024 (15.18MiB)``:
every allocation of the program, which XLA:CPU holds for the whole execution.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlacli.parse.buffer_assignment import ALLOCATION_LINE, Allocation

_TOTAL = re.compile(r"^Total bytes used: (\d+)", re.MULTILINE)
_VALUE = re.compile(r"^ value: <\d+ (\S+?) @\d+> \(size=(\d+),offset=\d+\): (.*)$")
_PEAK_HEADER = re.compile(r"^\s+Live ranges at (\d+) \(peak\):\s*$")
_PEAK_ENTRY = re.compile(r"^\s+(\S+?): (\d+) bytes \(cumulative: \d+ bytes\)\s*$")
_PEAK_TOTAL = re.compile(r"^\s+Stack trace breakdown for peak usage: ([\d ]+) bytes", re.MULTILINE)
_SEQUENCE_ENTRY = re.compile(r"^\s+(\d+):(\S+)\s*$")


@dataclass(frozen=True)
class BufferValue:
    """One HLO value placed in an allocation.

    Attributes:
        name: ``dot.349{}`` or ``fusion{0}``: the instruction and the tuple index.
        size: Bytes.
        shape: As printed, layout included (``f32[8,64,64]{2,1,0}``).
        allocation: The index of the allocation that holds it.
        roles: That allocation's roles (``parameter 3, ...``, ``maybe-live-out``,
            ``preallocated-temp``, ``color 1, ...``).
    """

    name: str
    size: int
    shape: str
    allocation: int
    roles: str

    @property
    def instruction(self) -> str:
        """The instruction's name, without the tuple index."""
        return self.name.partition("{")[0]

    @property
    def role(self) -> str:
        """``argument``, ``output``, ``constant`` or ``temporary``."""
        allocation = Allocation(self.allocation, self.size, self.roles)
        if allocation.is_parameter:
            return "argument"
        if allocation.is_output:
            return "output"
        if allocation.is_constant:
            return "constant"
        return "temporary"


@dataclass(frozen=True)
class PeakLiveSet:
    """The values live at the peak of XLA's heap simulation.

    Attributes:
        position: The peak's index in the instruction sequence.
        instruction: The instruction scheduled there, if the sequence was printed.
        total_bytes: XLA's peak (the live values' logical sizes summed).
        values: ``(name, bytes)`` of each live value, as XLA lists them.
    """

    position: int
    instruction: str | None
    total_bytes: int
    values: tuple[tuple[str, int], ...]


def parse_total_bytes(text: str) -> int | None:
    """``Total bytes used`` of a memory-usage report (or a buffer assignment)."""
    match = _TOTAL.search(text)
    return int(match.group(1)) if match else None


def parse_buffer_values(text: str) -> dict[str, BufferValue]:
    """Every value of a buffer assignment, by ``name{index}``."""
    values: dict[str, BufferValue] = {}
    allocation, roles = -1, ""
    for line in text.splitlines():
        if line.startswith("allocation "):
            match = ALLOCATION_LINE.match(line)
            if match:
                allocation, roles = int(match.group(1)), (match.group(3) or "").rstrip(":")
            continue
        if not line.startswith(" value: "):
            if values and not line.strip():
                break  # the allocations end with a blank line
            continue
        value = _VALUE.match(line)
        if value:
            name = _with_index(value.group(1))
            values.setdefault(
                name, BufferValue(name, int(value.group(2)), value.group(3), allocation, roles)
            )
    return values


def parse_peak_live_set(text: str) -> PeakLiveSet | None:
    """The live set at the peak, from the buffer assignment's ``HloLiveRange``."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _PEAK_HEADER.match(line)), None)
    if start is None:
        return None
    header = _PEAK_HEADER.match(lines[start])
    assert header is not None
    position = int(header.group(1))
    entries = []
    for line in lines[start + 1 :]:
        entry = _PEAK_ENTRY.match(line)
        if not entry:
            break
        entries.append((_with_index(entry.group(1)), int(entry.group(2))))
    total = _PEAK_TOTAL.search(text)
    total_bytes = (
        int(total.group(1).replace(" ", "")) if total else sum(size for _, size in entries)
    )
    return PeakLiveSet(position, _scheduled_at(lines, position), total_bytes, tuple(entries))


def _scheduled_at(lines: list[str], position: int) -> str | None:
    """The instruction at ``position`` of the printed ``InstructionSequence``."""
    try:
        start = lines.index("  InstructionSequence:")
    except ValueError:
        return None
    for line in lines[start + 1 :]:
        entry = _SEQUENCE_ENTRY.match(line)
        if not entry:
            return None
        if int(entry.group(1)) == position:
            return entry.group(2)
    return None


def _with_index(name: str) -> str:
    """``dot.3`` -> ``dot.3{}``: one spelling for a value in both sections."""
    return name if name.endswith("}") else name + "{}"
