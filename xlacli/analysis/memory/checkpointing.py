"""Gradient checkpointing as the HLO shows it: barriers and recomputed matmuls.

``torch_xla.utils.checkpoint.checkpoint`` runs the forward under ``no_grad``;
in the backward it puts its saved inputs through ``xm.optimization_barrier_``
(an HLO ``opt-barrier``) and runs the forward again from the barrier's
outputs, so that XLA's common-subexpression elimination cannot merge the
recomputation back into the forward pass. A recomputed region is a barrier
followed by matmuls that repeat a forward matmul (same torch op, source line
and shape) computed outside every region. Whether XLA kept them shows in the
optimized HLO: a matmul XLA merged back is one fewer there.
"""

from __future__ import annotations

from collections import Counter, deque

from xlacli.analysis.memory.precision import MATMUL_OPCODES
from xlacli.hlo.model import ArrayShape, Computation, HloModule, Instruction
from xlacli.report.memory import CheckpointFacts

BARRIER = "opt-barrier"
Signature = tuple[str, str, tuple[int, ...]]


def checkpoint_facts(before: HloModule | None, after: HloModule | None) -> CheckpointFacts | None:
    """Barriers and recomputed matmuls, or None without the HLO torch_xla emitted."""
    if before is None:
        return None
    entry = before.entry
    barriers = [i for i in entry.instructions if i.opcode == BARRIER]
    reach = _barriers_upstream(entry, barriers)  # one pass, not one walk per barrier
    inside = {name for name, mask in reach.items() if mask}
    sizes = _region_sizes(reach, len(barriers))
    outside = Counter(
        _signature(i)
        for i in entry.instructions
        if i.opcode in MATMUL_OPCODES and i.name not in inside
    )
    by_name = {i.name: i for i in entry.instructions}
    recomputed: Counter[Signature] = Counter()
    regions: set[int] = set()
    for name in inside:
        instruction = by_name[name]
        if instruction.opcode in MATMUL_OPCODES and _signature(instruction) in outside:
            recomputed[_signature(instruction)] += 1
            # Later regions are downstream of earlier ones too (the gradient flows
            # through every barrier): a matmul belongs to the nearest barrier, the
            # one whose region (what it reaches) is smallest, the first among equals.
            mask = reach[name]
            regions.add(min(_bits(mask), key=lambda i: (sizes[i], i)))
    kept = None
    if after is not None:
        compiled = Counter(
            _signature(i)
            for computation in after.computations
            for i in computation.instructions
            if i.opcode in MATMUL_OPCODES
        )
        kept = sum(
            min(count, max(compiled[signature] - outside[signature], 0))
            for signature, count in recomputed.items()
        )
    return CheckpointFacts(
        opt_barriers=len(barriers),
        opt_barriers_optimized=(None if after is None else after.opcode_counts().get(BARRIER, 0)),
        recomputed_regions=len(regions),
        recomputed_dots=sum(recomputed.values()),
        recomputed_dots_kept=kept,
    )


def _barriers_upstream(computation: Computation, barriers: list[Instruction]) -> dict[str, int]:
    """Each instruction's name -> the barriers it is (transitively) a user of, as
    bits (bit i: ``barriers[i]``), in one pass over the computation in
    dependency order."""
    bit = {barrier.name: 1 << index for index, barrier in enumerate(barriers)}
    by_name = {i.name: i for i in computation.instructions}
    reach: dict[str, int] = {}
    for name in _dependency_order(computation, by_name):
        mask = 0
        for operand in by_name[name].operands:
            mask |= reach.get(operand, 0) | bit.get(operand, 0)
        reach[name] = mask
    return reach


def _dependency_order(computation: Computation, by_name: dict[str, Instruction]) -> list[str]:
    """The instructions' names, each after its operands (Kahn's algorithm)."""
    waiting = {
        i.name: len({o for o in i.operands if o in by_name}) for i in computation.instructions
    }
    users: dict[str, list[str]] = {}
    for instruction in computation.instructions:
        for operand in set(instruction.operands):
            if operand in by_name:
                users.setdefault(operand, []).append(instruction.name)
    ready = deque(name for name, count in waiting.items() if count == 0)
    order = []
    while ready:
        name = ready.popleft()
        order.append(name)
        for user in users.get(name, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    return order


def _region_sizes(reach: dict[str, int], barriers: int) -> list[int]:
    """How many instructions each barrier reaches, counted once per distinct set of
    barriers (a model's layers share a few sets among thousands of instructions)."""
    sizes = [0] * barriers
    for mask, count in Counter(reach.values()).items():
        for index in _bits(mask):
            sizes[index] += count
    return sizes


def _bits(mask: int) -> list[int]:
    return [index for index in range(mask.bit_length()) if mask >> index & 1]


def _signature(instruction: Instruction) -> Signature:
    """What makes two matmuls the same computation to a reader: op, line, shape.

    The element type is left out: XLA:CPU computes a bf16 dot in f32.
    """
    shape = instruction.shape
    dims = shape.dimensions if isinstance(shape, ArrayShape) else ()
    return instruction.metadata.op_type, instruction.metadata.source, dims
