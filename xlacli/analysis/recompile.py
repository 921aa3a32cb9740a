"""Why each graph was compiled: a category, the user's line, before and after.

Each compile is compared with the nearest graph compiled before at the same
sync site (same Python frames), the way JAX compares cache keys: the input
signature first, then the IR node by node, then the HLO's constants and
attributes. The IR's source locations (``XLA_IR_DEBUG``) name the line of the
first node that differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xlacli.analysis.hints import hint_for
from xlacli.analysis.hlo_compare import HloDifference, compare_hlo
from xlacli.analysis.ir_compare import IrDifference, compare_ir
from xlacli.analysis.locate import Locator
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrGraph, IrNode
from xlacli.report import CompileCause, CompileEvent
from xlacli.words import counted

# CPU fallbacks whose result's shape depends on the values.
DATA_DEPENDENT_OPS = frozenset(
    {
        "aten::nonzero",
        "aten::masked_select",
        "aten::_unique2",
        "aten::unique_consecutive",
        "aten::unique_dim",
        "aten::_unique",
        "aten::repeat_interleave",
    }
)


@dataclass(frozen=True)
class CompiledGraph:
    """One compile, with what is needed to explain it."""

    index: int
    step: int | None
    graph_hash: str
    compile_time_s: float
    frames: tuple[Frame, ...]  # the sync's Python frames, innermost first
    value_read: bool  # the sync happened because Python read a tensor value
    ir: IrGraph | None
    input_signature: tuple[str, ...]
    fallbacks_in_step: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ExplainContext:
    """What the explainer needs beyond the compiles themselves."""

    warmup: int
    locator: Locator  # also loads each graph's HLO before optimization


def explain_compiles(
    graphs: Sequence[CompiledGraph], context: ExplainContext
) -> list[CompileEvent]:
    """One event per compile, in order."""
    seen: dict[tuple[Frame, ...], list[CompiledGraph]] = {}
    events = []
    for graph in graphs:
        previous = seen.setdefault(graph.frames, [])
        if previous:
            nearest, difference = _nearest(previous, graph)
            cause = _explain(nearest, graph, difference, context)
            compared_with: str | None = nearest.graph_hash
        else:
            cause, compared_with = _first_cause(graph, context), None
        events.append(
            CompileEvent(
                step=graph.step,
                graph_hash=graph.graph_hash,
                compile_time_s=graph.compile_time_s,
                steady_state=graph.step is not None and graph.step >= context.warmup,
                cause=cause,
                compared_with=compared_with,
            )
        )
        previous.append(graph)
    return events


def _nearest(
    previous: Sequence[CompiledGraph], graph: CompiledGraph
) -> tuple[CompiledGraph, IrDifference | None]:
    """The earlier graph closest to ``graph`` (latest first among equals)."""
    best: tuple[int, CompiledGraph, IrDifference | None] | None = None
    for candidate in reversed(previous):
        difference = compare_ir(candidate.ir, graph.ir) if candidate.ir and graph.ir else None
        distance = (0 if candidate.input_signature == graph.input_signature else 10_000) + (
            difference.distance if difference else 5_000
        )
        if best is None or distance < best[0]:
            best = (distance, candidate, difference)
    assert best is not None
    return best[1], best[2]


def _first_cause(graph: CompiledGraph, context: ExplainContext) -> CompileCause:
    user, library = context.locator.trigger(graph.frames)
    if graph.value_read:
        return _cause(
            "host_sync",
            user,
            library,
            "Python reads a tensor value here (.item(), print, bool(tensor), .cpu()...), "
            "so torch_xla ran the step so far as a graph of its own",
        )
    return _cause("first_compile", user, library, "the first graph at this sync site")


def _explain(
    old: CompiledGraph,
    new: CompiledGraph,
    difference: IrDifference | None,
    context: ExplainContext,
) -> CompileCause:
    if old.graph_hash == new.graph_hash:
        return _cause("unknown", None, None, "the same graph compiled again (compile cache full?)")
    signature = _signature_change(old, new)
    if signature is not None:
        category, detail, moved_at = signature
        return _cause(category, context.locator.inputs_site or moved_at, None, detail)
    if difference is None:  # no IR (a profile does not dump it): the HLO may still tell
        return _value_cause(old, new, context)
    if difference.kind == "ops":
        return _structure_cause(new, difference, context)
    if difference.kind == "shape":
        assert difference.old_node is not None and difference.new_node is not None
        return _shape_cause(new, difference.old_node, difference.new_node, context)
    return _value_cause(old, new, context)


def _signature_change(old: CompiledGraph, new: CompiledGraph) -> tuple[str, str, str] | None:
    """The input tensors whose dtype or shape changed and that the new graph reads,
    and where the first was made (a script's inputs are named by that line)."""
    changes: list[tuple[str, str, str]] = []
    for name, before, after in _paired_inputs(old.input_signature, new.input_signature):
        if before == after:
            continue
        _, _, old_type = before.rpartition(" ")
        _, _, new_type = after.rpartition(" ")
        if "[" not in old_type or "[" not in new_type or not _reads_input(new, new_type):
            continue
        kind = "dtype" if old_type.split("[")[0] != new_type.split("[")[0] else "shape"
        shown = name.rpartition("/")[0] and "input " + name.rpartition("/")[2]  # a script's line
        changes.append((kind, f"{shown or name} {kind} {old_type} -> {new_type}", name))
    if not changes:
        return None
    category = "input_dtype" if any(kind == "dtype" for kind, _, _ in changes) else "input_shape"
    return (
        category,
        "; ".join(detail for _, detail, _ in changes),
        changes[0][2].removeprefix("input "),
    )


def _paired_inputs(old: tuple[str, ...], new: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """``(name, before, after)`` for the inputs of the same name (a model
    file's position, a script's line) seen as often in both steps: a step
    that also moved the model's weights is not compared with one that did not."""
    names_old: dict[str, list[str]] = {}
    names_new: dict[str, list[str]] = {}
    for signature, names in ((old, names_old), (new, names_new)):
        for entry in signature:
            names.setdefault(entry.rpartition(" ")[0], []).append(entry)
    return [
        (name, before, after)
        for name, entries in names_new.items()
        if len(names_old.get(name, ())) == len(entries)
        for before, after in zip(names_old[name], entries, strict=True)
    ]


def _reads_input(graph: CompiledGraph, xla_type: str) -> bool:
    if graph.ir is None:
        return True
    return any(n.is_device_data and n.shape.split("{")[0] == xla_type for n in graph.ir.nodes)


SCALAR_OPS = frozenset({"prim::Constant", "xla::device_data"})


def _structure_cause(
    graph: CompiledGraph, difference: IrDifference, context: ExplainContext
) -> CompileCause:
    node = difference.new_node or difference.old_node
    user, library = context.locator.node(node, graph) if node else (None, None)
    if _is_special_scalar_swap(difference):
        # torch_xla bakes the Python scalars 0 and 1 into the graph as constants
        # and passes any other value as an input: 0.0 -> 0.1 swaps one for the other.
        return _cause(
            "constant_value",
            user,
            library,
            f"a Python scalar changed between 0 or 1, which torch_xla bakes in as a constant "
            f"({counted(len(difference.removed), 'op')} "
            f"{'/'.join(sorted(set(difference.removed)))} -> "
            f"{'/'.join(sorted(set(difference.added)))}), and another value",
        )
    detail = "; ".join(
        part
        for part in (_ops("added", difference.added), _ops("removed", difference.removed))
        if part
    )
    return _cause("graph_structure", user, library, detail)


def _is_special_scalar_swap(difference: IrDifference) -> bool:
    added, removed = set(difference.added), set(difference.removed)
    return (
        len(difference.added) == len(difference.removed) > 0
        and added | removed <= SCALAR_OPS
        and added != removed
    )


def _ops(verb: str, ops: tuple[str, ...], limit: int = 5) -> str:
    if not ops:
        return ""
    shown = ", ".join(ops[:limit]) + (f" and {len(ops) - limit} more" if len(ops) > limit else "")
    return f"{counted(len(ops), 'op')} {verb}: {shown}"


def _shape_cause(
    graph: CompiledGraph, old: IrNode, new: IrNode, context: ExplainContext
) -> CompileCause:
    change = f"{new.op} {_bare(old.shape)} -> {_bare(new.shape)}"
    user, library = context.locator.node(new, graph)
    if new.is_device_data:
        if context.locator.is_harness(new):
            return _cause("input_shape", context.locator.inputs_site, None, f"input {change}")
        if graph.fallbacks_in_step & DATA_DEPENDENT_OPS:
            ops = ", ".join(sorted(graph.fallbacks_in_step & DATA_DEPENDENT_OPS))
            return _cause(
                "data_dependent_shape",
                user,
                library,
                f"a result whose size depends on the data ({ops} on the CPU): {change}",
            )
        if context.locator.inputs_site is None:
            # A script: no get_inputs, so its inputs are the graph's parameters
            # (device data); MpDeviceLoader moves them at the loop's line, which
            # is also where its sync is.
            moved_at = context.locator.trigger(graph.frames)[0] or user
            dtype_changed = old.shape.split("[")[0] != new.shape.split("[")[0]
            category = "input_dtype" if dtype_changed else "input_shape"
            return _cause(category, moved_at, None, f"graph input (device data) {change}")
        return _cause("intermediate_shape", user, library, f"a tensor made on the host: {change}")
    return _cause("intermediate_shape", user, library, change)


def _value_cause(old: CompiledGraph, new: CompiledGraph, context: ExplainContext) -> CompileCause:
    load = context.locator.load_hlo
    old_hlo, new_hlo = load(old.graph_hash), load(new.graph_hash)
    if old_hlo is None or new_hlo is None:
        return _cause("unknown", None, None, "same IR; the HLO of one graph is missing")
    difference: HloDifference = compare_hlo(old_hlo, new_hlo)
    if difference.kind in ("constant", "attribute") and difference.new is not None:
        user, library = context.locator.metadata(difference.new.metadata, new)
        return _cause("constant_value", user, library, difference.detail)
    raw = difference.detail or "the IR and the HLO before optimization are the same"
    return _cause("unknown", None, None, f"no category fits: {raw}")


def _bare(shape: str) -> str:
    """``f32[4,8]{1,0}`` -> ``f32[4,8]``."""
    return shape.split("{")[0] if not shape.startswith("(") else shape


def _cause(category: str, user: str | None, library: str | None, detail: str) -> CompileCause:
    return CompileCause(
        category=category,
        location=user,
        library_location=library,
        detail=detail,
        hint=hint_for(category),
    )
