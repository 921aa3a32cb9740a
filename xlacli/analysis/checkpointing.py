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

from xlacli.analysis.precision import MATMUL_OPCODES
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
    users = _users(entry)  # once, not once per barrier
    downstream = [_downstream(users, barrier.name) for barrier in barriers]
    inside = set().union(*downstream) if downstream else set()
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
            # through every barrier): a matmul belongs to the nearest barrier.
            regions.add(min(range(len(downstream)), key=lambda i: _distance(downstream[i], name)))
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


def _users(computation: Computation) -> dict[str, list[str]]:
    """Each instruction's name -> the instructions that use its result."""
    users: dict[str, list[str]] = {}
    for instruction in computation.instructions:
        for operand in instruction.operands:
            users.setdefault(operand, []).append(instruction.name)
    return users


def _downstream(users: dict[str, list[str]], start: str) -> set[str]:
    """The instructions that (transitively) use ``start``'s result."""
    seen: set[str] = set()
    queue = deque(users.get(start, ()))
    while queue:
        name = queue.popleft()
        if name not in seen:
            seen.add(name)
            queue.extend(users.get(name, ()))
    return seen


def _distance(region: set[str], name: str) -> int:
    """How far ``name`` is from the region's barrier, by the region's size (nearer: smaller)."""
    return len(region) if name in region else 1 << 62


def _signature(instruction: Instruction) -> Signature:
    """What makes two matmuls the same computation to a reader: op, line, shape.

    The element type is left out: XLA:CPU computes a bf16 dot in f32.
    """
    shape = instruction.shape
    dims = shape.dimensions if isinstance(shape, ArrayShape) else ()
    return instruction.metadata.op_type, instruction.metadata.source, dims
