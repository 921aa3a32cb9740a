"""XLA's buffer assignment (``*-buffer-assignment.txt`` in an XLA dump).

Each allocation line says its size and role::

    allocation 0: size 2048, parameter 3, shape |f32[32,16]| at ShapeIndex {}:
    allocation 4: size 64, maybe-live-out:
    allocation 7: size 512, preallocated-temp:
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# An allocation's header line: its index, size and roles (memory_usage.py reads it too).
ALLOCATION_LINE = re.compile(r"^allocation (\d+): size (\d+)(?:, (.*?))?:?\s*$")


@dataclass(frozen=True)
class Allocation:
    """One buffer allocation and its roles."""

    index: int
    size: int
    roles: str  # "parameter 3, shape |...| at ShapeIndex {}", "maybe-live-out", ...

    @property
    def is_parameter(self) -> bool:
        return self.roles.startswith("parameter") or ", parameter " in self.roles

    @property
    def is_output(self) -> bool:
        return "maybe-live-out" in self.roles or "output shape" in self.roles

    @property
    def is_constant(self) -> bool:
        return "constant" in self.roles.split(",")[0]


@dataclass(frozen=True)
class BufferSummary:
    """Bytes by role: what the graph reads, writes and needs meanwhile."""

    input_bytes: int
    output_bytes: int
    temp_bytes: int


def parse_buffer_assignment(text: str) -> list[Allocation]:
    """Parse the allocation lines of a buffer assignment."""
    allocations = []
    for line in text.splitlines():
        match = ALLOCATION_LINE.match(line)
        if match:
            roles = (match.group(3) or "").rstrip(":")
            allocations.append(Allocation(int(match.group(1)), int(match.group(2)), roles))
    return allocations


def summarize_buffers(allocations: list[Allocation]) -> BufferSummary:
    """Sum sizes by role.

    Parameters are inputs (an aliased output is counted once, as input);
    live-out buffers that are not parameters are outputs; everything else
    but constants is temporary memory.
    """
    inputs = outputs = temps = 0
    for allocation in allocations:
        if allocation.is_parameter:
            inputs += allocation.size
        elif allocation.is_output:
            outputs += allocation.size
        elif not allocation.is_constant:
            temps += allocation.size
    return BufferSummary(inputs, outputs, temps)
