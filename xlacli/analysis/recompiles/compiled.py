"""What the recompile explainer works on: one compile with what explains it,
the context, and the small shared pieces of a cause (the input signature's
changes, a special scalar swap, building a ``CompileCause``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from xlacli.analysis.recompiles.hints import hint_for
from xlacli.analysis.recompiles.ir_compare import IrDifference
from xlacli.analysis.recompiles.locate import Locator
from xlacli.analysis.spmd.sharding_change import ShardingContext
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrGraph, IrNode
from xlacli.report.run_report import CompileCause


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
    # "input 0" -> the user's line that made that input tensor (in get_inputs)
    input_origins: Mapping[str, str] = field(default_factory=dict)
    # Per-site steady state (analysis/recompiles/phases.py): the phase the child gave the
    # step (setup, loop, after_loop), the step's loop iteration, and how many
    # earlier steps ran a graph at this site (None: unknown, the step index).
    step_phase: str = "loop"
    iteration: int | None = None
    site_runs: int | None = None
    # The user's file:line the graph's record names as its site (a torch.compile
    # backward graph, compiled by the autograd engine with no user frame: the
    # step's loss.backward() line).
    site: str | None = None
    # An eager-mode op's own graph (torch_xla's eager mode compiles one per op and
    # shape): compared only with the same op's graphs, never another op's.
    eager: bool = False


@dataclass(frozen=True)
class ExplainContext:
    """What the explainer needs beyond the compiles themselves."""

    warmup: int
    locator: Locator  # also loads each graph's HLO before optimization
    # SPMD: the mark_sharding lines and the mesh (analysis/spmd/sharding_change.py)
    shardings: ShardingContext = field(default_factory=ShardingContext)
    # A script's loop is its own: a site first seen after the warm-up is a new
    # phase. A model file's steps all run one step(): such a site is a change.
    new_phases: bool = True
    # Per site (its frames), the (step, graph hash) of each graph it ran: a
    # periodic graph alternates with its site's others (analysis/recompiles/phases.py).
    site_graphs: Mapping[tuple[Frame, ...], tuple[tuple[int, str], ...]] = field(
        default_factory=dict
    )
    # The source files of the optimizers whose step() ran (child/backward_calls.py):
    # any optimizer's ops are known by them, not only torch.optim's files.
    optimizer_files: frozenset[str] = frozenset()


def changed_node(
    difference: IrDifference, old: CompiledGraph, new: CompiledGraph
) -> tuple[IrNode | None, CompiledGraph]:
    """The node a difference names, with the graph it belongs to: an added or
    changed node is the new graph's, a removed one only exists in the old graph
    (the locator looks a node up in its own graph's IR and HLO stacks)."""
    if difference.new_node is not None:
        return difference.new_node, new
    return difference.old_node, old


def signature_change(old: CompiledGraph, new: CompiledGraph) -> tuple[str, str, str] | None:
    """The input tensors whose dtype or shape changed and that the new graph reads:
    (category, detail, the name of the first changed input)."""
    changes: list[tuple[str, str, str]] = []
    for name, before, after in paired_inputs(old.input_signature, new.input_signature):
        if before == after:
            continue
        _, _, old_type = before.rpartition(" ")
        _, _, new_type = after.rpartition(" ")
        if "[" not in old_type or "[" not in new_type or not reads_input(new, new_type):
            continue
        kind = "dtype" if old_type.split("[")[0] != new_type.split("[")[0] else "shape"
        shown = name.rpartition("/")[0] and "input " + name.rpartition("/")[2]  # a script's line
        changes.append((kind, f"{shown or name} {kind} {old_type} -> {new_type}", name))
    if not changes:
        return None
    dtype = [change for change in changes if change[0] == "dtype"]
    category = "input_dtype" if dtype else "input_shape"
    return category, "; ".join(detail for _, detail, _ in changes), (dtype or changes)[0][2]


def paired_inputs(old: tuple[str, ...], new: tuple[str, ...]) -> list[tuple[str, str, str]]:
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


def script_input_line(name: str) -> str | None:
    """A script's inputs are named by the ``file:line`` that moved them to the
    device (``input /abs/train.py:42``); a model file's by position."""
    moved_at = name.removeprefix("input ")
    return moved_at if "/" in moved_at else None


def reads_input(graph: CompiledGraph, xla_type: str) -> bool:
    if graph.ir is None:
        return True
    return any(n.is_device_data and n.shape.split("{")[0] == xla_type for n in graph.ir.nodes)


SCALAR_OPS = frozenset({"prim::Constant", "xla::device_data"})


def is_special_scalar_swap(difference: IrDifference) -> bool:
    added, removed = set(difference.added), set(difference.removed)
    return (
        len(difference.added) == len(difference.removed) > 0
        and added | removed <= SCALAR_OPS
        and added != removed
    )


def input_origin(graph: CompiledGraph, xla_type: str) -> str | None:
    """The user's line that made the input of this type, if only one input has it."""
    names = [
        entry.rpartition(" ")[0]
        for entry in graph.input_signature
        if entry.rpartition(" ")[2] == xla_type
    ]
    return graph.input_origins.get(names[0]) if len(names) == 1 else None


def bare(shape: str) -> str:
    """``f32[4,8]{1,0}`` -> ``f32[4,8]``."""
    return shape.split("{")[0] if not shape.startswith("(") else shape


# ``make_cause``'s default: the category's own hint.
HINT_OF_CATEGORY = "<category>"


def make_cause(
    category: str,
    user: str | None,
    library: str | None,
    detail: str,
    hint: str | None = HINT_OF_CATEGORY,
) -> CompileCause:
    return CompileCause(
        category=category,
        location=user,
        library_location=library,
        detail=detail,
        hint=hint_for(category) if hint == HINT_OF_CATEGORY else hint,
    )
