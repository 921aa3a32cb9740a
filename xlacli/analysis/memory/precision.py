"""The precision mix of an HLO module: which element types its work is done in.

Matmul FLOPs come from the shapes: a ``dot`` does ``2 * output elements *
contracted size`` (the product of the lhs contracting dimensions); a
``convolution`` does ``2 * output elements * kernel elements / output
features`` (each output element reads a window of every input feature of its
group). A matmul counts in the element type of its lhs operand: what the
hardware multiplies, whatever type the result is accumulated or stored in.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

from xlacli.hlo.model import ArrayShape, HloModule, Instruction
from xlacli.paths import display_location, display_walked
from xlacli.report.memory import GraphPrecision, PrecisionMix

MATMUL_OPCODES = ("dot", "convolution")
LOW_PRECISION = ("bf16", "f16")


def precision_mix(module: HloModule) -> PrecisionMix:
    """Instructions and result bytes by element type, and matmul FLOPs by operand type.

    Every computation counts, fused ones included, as ``instruction_count`` does;
    tuple-shaped results (which only group other values) count in neither.
    """
    instructions: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    flops: Counter[str] = Counter()
    for computation in module.computations:
        by_name = {instruction.name: instruction for instruction in computation.instructions}
        for instruction in computation.instructions:
            if isinstance(instruction.shape, ArrayShape):
                kind = instruction.shape.element_type
                instructions[kind] += 1
                sizes[kind] += instruction.shape.byte_size
            if instruction.opcode in MATMUL_OPCODES:
                counted = matmul_flops(instruction, by_name)
                if counted is not None:
                    flops[counted[0]] += counted[1]
    return PrecisionMix(dict(instructions), dict(sizes), dict(flops))


def matmul_flops(
    instruction: Instruction, by_name: dict[str, Instruction]
) -> tuple[str, int] | None:
    """``(operand element type, FLOPs)`` of a dot or convolution, or None if unreadable."""
    if len(instruction.operands) < 2 or not isinstance(instruction.shape, ArrayShape):
        return None
    lhs, rhs = (by_name.get(name) for name in instruction.operands[:2])
    if lhs is None or rhs is None:
        return None
    if not isinstance(lhs.shape, ArrayShape) or not isinstance(rhs.shape, ArrayShape):
        return None
    outputs = math.prod(instruction.shape.dimensions)
    if instruction.opcode == "dot":
        contracting = _dims(instruction.attributes.get("lhs_contracting_dims", "{}"))
        per_output = math.prod(lhs.shape.dimensions[d] for d in contracting)
    else:
        per_output = _kernel_reads(rhs.shape, instruction.attributes.get("dim_labels", ""))
    return lhs.shape.element_type, 2 * outputs * per_output


def _kernel_reads(kernel: ArrayShape, dim_labels: str) -> int:
    """Kernel elements per output feature: ``b01f_01io->b01f`` puts ``o`` at index 3."""
    labels = dim_labels.split("_")[1].split("->")[0] if "_" in dim_labels else ""
    elements = math.prod(kernel.dimensions)
    if len(labels) != len(kernel.dimensions) or "o" not in labels:
        return elements
    return elements // max(kernel.dimensions[labels.index("o")], 1)


def _dims(text: str) -> tuple[int, ...]:
    inner = text.strip("{} ")
    return tuple(int(part) for part in inner.split(",") if part.strip())


def graph_precision(
    before: HloModule | None, after: HloModule | None, autocast: str | None
) -> GraphPrecision | None:
    """The mix as requested (before XLA's optimizations) and as compiled (after)."""
    if before is None:
        return None
    return GraphPrecision(
        requested=precision_mix(before),
        optimized=precision_mix(after) if after is not None else None,
        autocast=autocast,
        f64_sources=f64_sources(before),
    )


def f64_sources(module: HloModule) -> tuple[str, ...]:
    """The distinct source lines of the module's f64 instructions, most first."""
    sources: Counter[str] = Counter()
    for computation in module.computations:
        for instruction in computation.instructions:
            shape = instruction.shape
            if isinstance(shape, ArrayShape) and shape.element_type == "f64":
                sources[instruction.metadata.source or "?"] += 1
    return tuple(source for source, _ in sources.most_common())


def precision_warnings(precision: GraphPrecision) -> list[str]:
    """What the user most likely did not mean: autocast that missed the matmuls, f64."""
    warnings = []
    requested = precision.requested
    if precision.autocast and requested.total_dot_flops:
        f32_share = requested.dot_share("f32")
        if f32_share > 0:
            warnings.append(
                f"autocast ({precision.autocast}) was on, but {f32_share:.0%} of the matmul "
                "FLOPs are f32: the autocast context does not cover them (autocast on "
                'another device type, e.g. "cpu" or "cuda", does not reach XLA tensors)'
            )
    f64 = requested.instructions.get("f64", 0)
    if f64:
        warnings.append(_f64_warning(f64, precision.f64_sources, precision.f64_user_lines))
    return warnings


# Libraries whose own f64 is expected: an optimizer's step count and bias corrections.
_EXPECTED_F64 = ("torch/optim/",)


def _f64_warning(count: int, sources: tuple[str, ...], users: Mapping[str, str]) -> str:
    """Names the line, the user's with the library's beside it; an optimizer's
    internals are expected, not the user's leak."""
    known = [source for source in sources if source != "?"]
    if known and all(any(lib in source for lib in _EXPECTED_F64) for source in known):
        where = (
            f"at {_walked(known[0], users)}" if known[0] in users else f"inside {_shown(known[0])}"
        )
        return (
            f"{count} f64 instructions {where}: the optimizer's own "
            "(step counts, bias corrections); expected, nothing to fix"
        )
    user = [source for source in known if not any(lib in source for lib in _EXPECTED_F64)]
    where = f" at {_walked(user[0], users)}" if user else ""
    return (
        f"{count} f64 instructions{where}: a Python float or a numpy default (float64) "
        "leaked in; create tensors with dtype=torch.float32"
    )


def _shown(source: str) -> str:
    return display_location(source) or source


def _walked(source: str, users: Mapping[str, str]) -> str:
    """``model.py:12 (inside torch/optim/adam.py:466)``, or the line as it is."""
    return display_walked(users[source], source) or source if source in users else _shown(source)


def backend_note(precision: GraphPrecision) -> str | None:
    """When XLA computes low-precision matmuls in f32 (XLA:CPU upcasts bf16 and f16 dots)."""
    optimized = precision.optimized
    if optimized is None:
        return None
    requested_low = sum(precision.requested.dot_flops.get(t, 0) for t in LOW_PRECISION)
    optimized_low = sum(optimized.dot_flops.get(t, 0) for t in LOW_PRECISION)
    if requested_low and optimized_low < requested_low:
        return "XLA computes them in f32 on this backend (XLA:CPU upcasts bf16/f16 matmuls)"
    return None
