"""Why each graph was compiled: a category, the user's line, before and after.

Each compile is compared with the nearest graph compiled before at the same
sync site (same Python frames), the way JAX compares cache keys: the input
signature first, then the IR node by node, then the HLO's constants and
attributes. The IR's source locations (``XLA_IR_DEBUG``) name the line of the
first node that differs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath

from xlacli.analysis.recompiles.compiled import (
    CompiledGraph,
    ExplainContext,
    bare,
    changed_node,
    input_origin,
    is_special_scalar_swap,
    make_cause,
    script_input_line,
    signature_change,
)
from xlacli.analysis.recompiles.hints import (
    CLOSURE_READ_HINT,
    NO_BRANCH_HINT,
    branch_above,
    hint_for,
)
from xlacli.analysis.recompiles.hlo_compare import HloDifference, compare_hlo
from xlacli.analysis.recompiles.ir_compare import (
    IrDifference,
    IrOps,
    compare_ir,
    ir_distance,
    ir_ops,
)
from xlacli.analysis.recompiles.patterns import (
    LOOP_COMPILES,
    OPTIMIZER_BRANCH_HINT,
    is_optimizer_node,
    lazy_artefact_detail,
    pattern_cause,
    read_hint,
)
from xlacli.analysis.recompiles.phases import SETUP, SiteCompile, alternates, judge
from xlacli.analysis.recompiles.unrolled import loop_above
from xlacli.analysis.spmd.sharding_change import input_sharding_change
from xlacli.parse.frames import Frame, in_step_closure
from xlacli.parse.ir_dump import IrNode
from xlacli.paths import split_location
from xlacli.report.run_report import CompileCause, CompileEvent
from xlacli.units import counted

__all__ = ["CompiledGraph", "ExplainContext", "explain_compiles"]

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


def explain_compiles(
    graphs: Sequence[CompiledGraph], context: ExplainContext
) -> list[CompileEvent]:
    """One event per compile, in order; steady state per site (analysis/recompiles/phases.py)."""
    seen: dict[tuple[Frame, ...], list[CompiledGraph]] = {}
    per_read_site = Counter((graph.frames, graph.step) for graph in graphs if graph.value_read)
    ops: dict[int, IrOps] = {}  # by id of the IR: each graph's IR normalised once
    events = []
    setup_eager = _eager_before_loop(graphs)
    # The user's files as the IR names them (base names): where a live tensor of
    # theirs was made, never a library's line every graph shares (a forward's).
    user_files = {
        PurePath(frame.file).name
        for graph in graphs
        for frame in graph.frames
        if context.locator.roots.is_user(frame)
    }
    for graph in graphs:
        previous = seen.setdefault(graph.frames, [])
        if graph.eager:  # the same op's graphs of earlier steps only: another op, or
            # another tensor at the same line in the same step, is another program
            previous = [
                p for p in previous if p.eager and p.step != graph.step and _same_ops(p, graph, ops)
            ]
        compared_with: str | None = None
        if graph.index in setup_eager:
            cause = _eager_setup_cause(graph, context)
        elif previous:
            nearest, difference = _nearest(previous, graph, ops)
            in_loop = per_read_site[graph.frames, graph.step] >= LOOP_COMPILES
            cause = pattern_cause(
                previous, nearest, graph, difference, context, in_loop
            ) or _explain(nearest, graph, difference, context)
            if cause.category == "graph_structure":
                carried = _carried_over(graph, nearest, difference, graphs, user_files)
                if carried is not None:
                    cause = _carried_over_cause(graph, *carried, difference, context)
            if graph.eager and cause.category == "intermediate_shape":
                # An eager op's graph is that op on its inputs: a shape in it
                # changed because an input's did.
                cause = replace(cause, category="input_shape", hint=hint_for("input_shape"))
            compared_with = nearest.graph_hash
        else:
            cause = _first_cause(graph, context)
        events.append(
            CompileEvent(
                step=graph.step,
                graph_hash=graph.graph_hash,
                compile_time_s=graph.compile_time_s,
                steady_state=False,  # judged below, per site
                cause=cause,
                compared_with=compared_with,
            )
        )
        seen[graph.frames].append(graph)
    facts = [
        _in_setup(site_compile(graph, event.cause.category, context.site_graphs))
        if graph.index in setup_eager
        else site_compile(graph, event.cause.category, context.site_graphs)
        for graph, event in zip(graphs, events, strict=True)
    ]
    verdicts = judge(facts, context.warmup, new_phases=context.new_phases)
    return [
        replace(event, steady_state=verdict.steady_state, phase=verdict.phase)
        for event, verdict in zip(events, verdicts, strict=True)
    ]


def _carried_over(
    new: CompiledGraph,
    old: CompiledGraph,
    difference: IrDifference | None,
    graphs: Sequence[CompiledGraph],
    user_files: set[str],
) -> tuple[CompiledGraph, IrNode] | None:
    """The earlier graph of *another* site whose lines made ops this graph has and
    the site's own earlier graph had not, with one such node: a tensor made there
    was still alive and never synced, so the next sync computed it too (the last
    evaluation batch's ``pred`` folded into the next training step)."""
    if difference is None or new.ir is None or old.ir is None:
        return None
    own = {node.location for node in old.ir.nodes}
    fresh = {
        node.location
        for node in _computed(new.ir.nodes)
        if node.location is not None and node.location.file in user_files
    } - own
    if not fresh:
        return None
    for other in reversed(graphs[: graphs.index(new)]):
        if other.frames == new.frames or other.ir is None:
            continue
        shared = fresh & {node.location for node in _computed(other.ir.nodes)}
        if shared:
            nodes = [node for node in new.ir.nodes if node.location in shared]
            # The node the user wrote: a location in a library is the library's line.
            return other, next((n for n in nodes if n.op != "xla::device_data"), nodes[0])
    return None


# Nodes that compute nothing of their own: a constant or an input is made at many
# lines by many graphs, and says nothing of where a tensor was computed.
_NOT_COMPUTED = frozenset({"prim::Constant", "xla::device_data"})


def _computed(nodes: Sequence[IrNode]) -> list[IrNode]:
    return [node for node in nodes if node.location is not None and node.op not in _NOT_COMPUTED]


def _carried_over_cause(
    graph: CompiledGraph,
    origin: CompiledGraph,
    node: IrNode,
    difference: IrDifference | None,
    context: ExplainContext,
) -> CompileCause:
    assert difference is not None
    user, library = context.locator.node(node, graph)
    origin_site = origin.site.rpartition("/")[2] if origin.site else "another site"
    detail = (
        f"ops from another place folded into this graph: {_ops('added', difference.added)}, "
        f"made at this line for the graph of {origin_site} (a live tensor never synced there)"
    )
    return make_cause("carried_over", user, library, detail)


def _same_ops(old: CompiledGraph, new: CompiledGraph, ops: dict[int, IrOps]) -> bool:
    old_ops, new_ops = _ops_of(old, ops), _ops_of(new, ops)
    return old_ops is not None and new_ops is not None and old_ops.ops == new_ops.ops


def _eager_before_loop(graphs: Sequence[CompiledGraph]) -> set[int]:
    """Eager ops compiled before the loop's first sync, while the model is built
    (``model.to(device)`` under ``eager_mode(True)``): the child counts them in
    the first step, but their line comes before the loop of that step's sync.
    By index; empty when the step's sync has no loop line to compare with."""
    first_step = next((g.step for g in graphs if not g.eager and g.step is not None), None)
    syncs = [g for g in graphs if not g.eager and g.step == first_step and g.site]
    header = loop_above(syncs[0].site, _read_lines) if syncs and syncs[0].site else None
    if header is None:
        return set()
    loop_file, loop_line = split_location(header)
    found = set()
    for graph in graphs:
        if not graph.eager or graph.step != first_step or not graph.site:
            continue
        file, line = split_location(graph.site)
        if file == loop_file and line is not None and loop_line is not None and line < loop_line:
            found.add(graph.index)
    return found


def _read_lines(file: str) -> list[str] | None:
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return None


def _in_setup(fact: SiteCompile) -> SiteCompile:
    return replace(fact, step_phase=SETUP)


EAGER_SETUP_DETAIL = (
    "run while the model is built, before the loop: eager mode compiles each op once "
    "per shape (here one graph per parameter's shape): expected, nothing to fix"
)


def _eager_setup_cause(graph: CompiledGraph, context: ExplainContext) -> CompileCause:
    user, library = context.locator.trigger(graph.frames)
    return make_cause("first_compile", user or graph.site, library, EAGER_SETUP_DETAIL)


def site_compile(
    graph: CompiledGraph,
    category: str,
    site_graphs: Mapping[tuple[Frame, ...], tuple[tuple[int, str], ...]],
) -> SiteCompile:
    """A model file's unit tests and old callers give no site facts: a step
    then counts as one run of every site before it."""
    fallback = graph.step if graph.step_phase == "loop" else None
    return SiteCompile(
        site=graph.frames,
        step=graph.step,
        step_phase=graph.step_phase,
        iteration=graph.iteration if graph.iteration is not None else fallback,
        site_runs=graph.site_runs if graph.site_runs is not None else (graph.step or 0),
        category=category,
        periodic=alternates(graph.step, graph.graph_hash, site_graphs.get(graph.frames, ())),
    )


def _nearest(
    previous: Sequence[CompiledGraph], graph: CompiledGraph, ops: dict[int, IrOps]
) -> tuple[CompiledGraph, IrDifference | None]:
    """The earlier graph closest to ``graph`` (latest first among equals),
    and how the two differ."""
    best: tuple[int, CompiledGraph] | None = None
    new = _ops_of(graph, ops)
    for candidate in _candidates(previous, graph, ops):
        old = _ops_of(candidate, ops)
        distance = (0 if candidate.input_signature == graph.input_signature else 10_000) + (
            ir_distance(old, new) if old is not None and new is not None else 5_000
        )
        if best is None or distance < best[0]:
            best = (distance, candidate)
    assert best is not None
    nearest = best[1]
    old = _ops_of(nearest, ops)
    difference = (
        compare_ir(nearest.ir, graph.ir, (old, new))
        if nearest.ir and graph.ir and old is not None and new is not None
        else None
    )
    return nearest, difference


# Earlier graphs at a site compared with a new one: all of the latest, and of
# the older ones the latest of each kind of IR ops, and of those with the new
# graph's input signature (the nearest by far) the latest of each kind too. A
# storm of N shapes at one site (each its own signature) then costs about
# N·RECENT distances, not N²/2.
RECENT_CANDIDATES = 32


def _candidates(
    previous: Sequence[CompiledGraph], graph: CompiledGraph, ops: dict[int, IrOps]
) -> Iterator[CompiledGraph]:
    """The earlier graphs worth comparing with ``graph``, latest first."""
    yield from reversed(previous[-RECENT_CANDIDATES:])
    kinds: set[tuple[bool, tuple[str, ...] | None]] = set()
    for candidate in reversed(previous[:-RECENT_CANDIDATES]):
        candidate_ops = _ops_of(candidate, ops)
        same_inputs = candidate.input_signature == graph.input_signature
        kind = (same_inputs, candidate_ops.ops if candidate_ops else None)
        if kind not in kinds:
            kinds.add(kind)
            yield candidate


def _ops_of(graph: CompiledGraph, ops: dict[int, IrOps]) -> IrOps | None:
    if graph.ir is None:
        return None
    key = id(graph.ir)  # the IR objects live as long as this explanation
    if key not in ops:
        ops[key] = ir_ops(graph.ir)
    return ops[key]


def _first_cause(graph: CompiledGraph, context: ExplainContext) -> CompileCause:
    user, library = context.locator.trigger(graph.frames)
    if graph.value_read and in_step_closure(graph.frames):
        return _closure_read_cause(graph, context, user, library)
    if graph.value_read:
        caller = context.locator.outer_user_line(graph.frames)
        also = (make_cause("host_sync", caller, None, "the call that led to the read"),)
        cause = make_cause(
            "host_sync",
            user,
            library,
            "Python reads a tensor value here (.item(), print, bool(tensor), .cpu()...), "
            "so torch_xla ran the step so far as a graph of its own"
            + (" (the read is inside the library this line calls)" if library else ""),
            hint=read_hint(library),
        )
        return replace(cause, also=also) if caller else cause
    if user is None or (graph.site is not None and user == context.locator.entry_site):
        user = graph.site  # no user frame in the sync's stack (the autograd engine's)
    return make_cause("first_compile", user, library, "the first graph at this sync site")


def _closure_read_cause(
    graph: CompiledGraph, context: ExplainContext, user: str | None, library: str | None
) -> CompileCause:
    """A read inside ``xm.add_step_closure``: the closure already runs after the
    step's graph, but what it reads was not made by that graph (an op inside the
    closure, or a tensor the step never kept), so the read runs a graph of its own."""
    caller = context.locator.outer_user_line(graph.frames)
    cause = make_cause(
        "host_sync",
        user,
        library,
        "a value read inside a step closure (xm.add_step_closure): the closure runs after "
        "the step's graph, but what it reads was not computed by that graph (ops inside the "
        "closure, or a tensor the step did not keep), so torch_xla ran a graph of its own",
        hint=CLOSURE_READ_HINT,
    )
    if caller is None:
        return cause
    also = make_cause("host_sync", caller, None, "the sync that ran the step closure", hint=None)
    return replace(cause, also=(also,))


def _explain(
    old: CompiledGraph,
    new: CompiledGraph,
    difference: IrDifference | None,
    context: ExplainContext,
) -> CompileCause:
    if old.graph_hash == new.graph_hash:
        return make_cause(
            "unknown", None, None, "the same graph compiled again (compile cache full?)"
        )
    signature = signature_change(old, new)
    if signature is not None:
        category, detail, name = signature
        origin = (
            new.input_origins.get(name) or old.input_origins.get(name) or script_input_line(name)
        )
        cause = make_cause(category, origin or context.locator.inputs_site, None, detail)
        return cause
    same_ops = difference is None or difference.kind not in ("ops", "shape")
    sharding = _sharding_cause(old, new, context) if same_ops else None
    if sharding is not None:
        return sharding
    if difference is None:  # no IR (a profile does not dump it): the HLO may still tell
        return _value_cause(old, new, context)
    if difference.kind == "ops":
        structure = _structure_cause(old, new, difference, context)
        if difference.shape_change is not None and structure.category == "graph_structure":
            # A size that changed on its own explains more than the ops around it.
            old_node, new_node = difference.shape_change
            shaped = _shape_cause(new, old_node, new_node, context)
            return replace(shaped, also=(structure,))
        return structure
    if difference.folded:
        return _artefact_cause(new, difference, context)
    if difference.kind == "shape":
        assert difference.old_node is not None and difference.new_node is not None
        return _shape_cause(new, difference.old_node, difference.new_node, context)
    return _value_cause(old, new, context)


def _structure_cause(
    old: CompiledGraph, new: CompiledGraph, difference: IrDifference, context: ExplainContext
) -> CompileCause:
    node, owner = changed_node(difference, old, new)
    user, library = context.locator.node(node, owner) if node else (None, None)
    if is_special_scalar_swap(difference):
        # torch_xla bakes the Python scalars 0 and 1 into the graph as constants
        # and passes any other value as an input: 0.0 -> 0.1 swaps one for the other.
        return make_cause(
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
    if difference.new_node is not None and difference.added:
        detail += f" (new: {difference.new_node.op} {bare(difference.new_node.shape)})"
    if is_optimizer_node(node, library, context.optimizer_files):
        return make_cause("graph_structure", user, library, detail, hint=OPTIMIZER_BRANCH_HINT)
    # "A Python branch changes the ops" only where the code has one above the line.
    hint = None if user is None or branch_above(user) else NO_BRANCH_HINT
    return make_cause("graph_structure", user, library, detail, **({"hint": hint} if hint else {}))


def _artefact_cause(
    graph: CompiledGraph, difference: IrDifference, context: ExplainContext
) -> CompileCause:
    ops = tuple(node.op for node in difference.folded)
    user, library = context.locator.node(difference.folded[0], graph)
    return make_cause("lazy_artefact", user, library, lazy_artefact_detail(ops))


def _ops(verb: str, ops: tuple[str, ...], limit: int = 5) -> str:
    if not ops:
        return ""
    shown = ", ".join(ops[:limit]) + (f" and {len(ops) - limit} more" if len(ops) > limit else "")
    return f"{counted(len(ops), 'op')} {verb}: {shown}"


def _shape_cause(
    graph: CompiledGraph, old: IrNode, new: IrNode, context: ExplainContext
) -> CompileCause:
    change = f"{new.op} {bare(old.shape)} -> {bare(new.shape)}"
    user, library = context.locator.node(new, graph)
    if new.is_device_data:
        if context.locator.is_harness(new):
            origin = input_origin(graph, bare(new.shape))
            return make_cause(
                "input_shape", origin or context.locator.inputs_site, None, f"input {change}"
            )
        if graph.fallbacks_in_step & DATA_DEPENDENT_OPS:
            ops = ", ".join(sorted(graph.fallbacks_in_step & DATA_DEPENDENT_OPS))
            return make_cause(
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
            return make_cause(category, moved_at, None, f"graph input (device data) {change}")
        return make_cause(
            "intermediate_shape", user, library, f"a tensor made on the host: {change}"
        )
    return make_cause("intermediate_shape", user, library, change)


def _value_cause(old: CompiledGraph, new: CompiledGraph, context: ExplainContext) -> CompileCause:
    load = context.locator.load_hlo
    old_hlo, new_hlo = load(old.graph_hash), load(new.graph_hash)
    if old_hlo is None or new_hlo is None:
        return make_cause("unknown", None, None, "same IR; the HLO of one graph is missing")
    difference: HloDifference = compare_hlo(old_hlo, new_hlo)
    if difference.kind in ("constant", "attribute") and difference.new is not None:
        user, library = context.locator.metadata(difference.new.metadata, new)
        return make_cause("constant_value", user, library, difference.detail)
    raw = difference.detail or "the IR and the HLO before optimization are the same"
    return make_cause("unknown", None, None, f"no category fits: {raw}")


def _sharding_cause(
    old: CompiledGraph, new: CompiledGraph, context: ExplainContext
) -> CompileCause | None:
    """SPMD: an input whose sharding changed (analysis/spmd/sharding_change.py)."""
    load = context.locator.load_hlo
    old_hlo, new_hlo = load(old.graph_hash), load(new.graph_hash)
    if old_hlo is None or new_hlo is None:
        return None
    change = input_sharding_change(old_hlo, new_hlo, context.shardings)
    if change is None:
        return None
    location, detail = change
    return make_cause("sharding", location or context.locator.inputs_site, None, detail)
