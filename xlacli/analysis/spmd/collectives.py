"""The collectives of a partitioned HLO module: what the devices exchange.

After SPMD partitioning, XLA's module holds one program per device; its
``all-reduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all`` and
``collective-permute`` instructions (or their async ``-start``/``-done`` pairs,
counted once, at the start) are the communication each step pays for.
"""

from __future__ import annotations

from collections.abc import Callable

from xlacli.hlo.model import ArrayShape, HloModule, Instruction, Metadata, Shape, TupleShape
from xlacli.parse.frames import outside_xlacli
from xlacli.report.sharding import CollectiveOp

COLLECTIVE_KINDS = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "collective-permute",
)
# (user line, library line) of an instruction's metadata.
Locate = Callable[[Metadata], tuple[str | None, str | None]]


def shape_bytes(shape: Shape) -> int:
    """The bytes of an array shape, or of every array in a tuple shape."""
    if isinstance(shape, TupleShape):
        return sum(shape_bytes(element) for element in shape.elements)
    if isinstance(shape, ArrayShape):
        return shape.byte_size
    return 0


def collective_kind(opcode: str) -> str | None:
    """``all-gather-start`` -> ``all-gather``; None for a ``-done`` or any other op."""
    base = opcode.removesuffix("-start")
    return base if base in COLLECTIVE_KINDS else None


def find_collectives(module: HloModule, locate: Locate | None = None) -> list[CollectiveOp]:
    """Every collective of the module, in text order (fused computations included)."""
    found = []
    for computation in module.computations:
        for instruction in computation.instructions:
            kind = collective_kind(instruction.opcode)
            if kind is not None:
                found.append(_collective(kind, instruction, locate))
    return found


def _collective(kind: str, instruction: Instruction, locate: Locate | None) -> CollectiveOp:
    user, library = locate(instruction.metadata) if locate else (None, None)
    if user is None and library is None and instruction.metadata.source_file:
        user = outside_xlacli(
            f"{instruction.metadata.source_file}:{instruction.metadata.source_line}"
        )
    attributes = instruction.attributes
    groups = attributes.get("replica_groups") or attributes.get("source_target_pairs") or ""
    return CollectiveOp(
        kind=kind,
        name=instruction.name,
        bytes=_result_bytes(kind, instruction),
        replica_groups=groups,
        is_async=instruction.opcode.endswith("-start"),
        location=user,
        library_location=library,
    )


def _result_bytes(kind: str, instruction: Instruction) -> int:
    """The bytes the collective produces on each device.

    An async start's result is a tuple holding its operand too (and, for a
    permute, two u32 contexts): only the output counts.
    """
    shape = instruction.shape
    starts_with_operand = (
        instruction.opcode.endswith("-start")
        and isinstance(shape, TupleShape)
        and kind != "all-reduce"
        and len(shape.elements) >= 2
    )
    if starts_with_operand:
        assert isinstance(shape, TupleShape)
        return shape_bytes(shape.elements[1])
    return shape_bytes(shape)
