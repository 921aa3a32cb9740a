"""Graphs a cache served, judged as compiles are: a budget counts what the code does.

torch_xla compiles a graph once per process and keeps it (and, with
``xr.initialize_cache``, across processes): a test run after another that
compiled the same shapes, or a check on a machine with a warm persistent cache,
runs a graph without compiling it. Counting compiles alone would then pass a
budget that fails when the test runs alone. Each graph the run executed but
never compiled is judged by the steady-state rule (``analysis/recompiles/phases.py``)
together with the compiles, as if it had compiled where it first ran.
"""

from __future__ import annotations

from collections.abc import Sequence

from xlacli.analysis.recompiles.compiled import CompiledGraph, ExplainContext, paired_inputs
from xlacli.analysis.recompiles.explain import site_compile
from xlacli.analysis.recompiles.phases import AFTER_LOOP, SETUP, judge
from xlacli.report.run_report import CompileEvent, ServedGraph
from xlacli.report.steps import LOOP_PHASE

SERVED_DETAIL = "not compiled in this run: a cache served it (compiled earlier in this process)"


def judge_served(
    compiled: Sequence[CompiledGraph],
    events: Sequence[CompileEvent],
    served: Sequence[CompiledGraph],
    context: ExplainContext,
) -> tuple[ServedGraph, ...]:
    """Each served graph's phase and steady state, judged in order among the compiles."""
    if not served:
        return ()
    graphs = [*compiled, *served]
    categories = [event.cause.category for event in events]
    details: list[str] = [""] * len(compiled)
    for graph in served:
        category, detail = _served_cause(graph, graphs)
        categories.append(category)
        details.append(detail)
    order = sorted(range(len(graphs)), key=lambda i: (_when(graphs[i]), i))
    verdicts = judge(
        [site_compile(graphs[i], categories[i], context.site_graphs) for i in order],
        context.warmup,
        new_phases=context.new_phases,
    )
    judged = dict(zip(order, verdicts, strict=True))
    return tuple(
        ServedGraph(
            step=graph.step,
            graph_hash=graph.graph_hash,
            site=graph.site,
            phase=judged[index].phase,
            steady_state=judged[index].steady_state,
            detail=details[index],
        )
        for index, graph in enumerate(graphs)
        if index >= len(compiled)
    )


def _when(graph: CompiledGraph) -> float:
    """Where a graph first ran: the setup before every step, the tail after them."""
    if graph.step is not None:
        return graph.step
    return float("inf") if graph.step_phase == AFTER_LOOP else -1.0


def _served_cause(graph: CompiledGraph, graphs: Sequence[CompiledGraph]) -> tuple[str, str]:
    """What set a served graph apart from its site's earlier graph, as far as the
    step's inputs tell (its IR was dumped where it compiled, not here): the
    category the steady-state rule judges it by, and the detail."""
    earlier = [
        other
        for other in graphs
        if other.frames == graph.frames
        and other is not graph
        and _when(other) < _when(graph)
        and other.step_phase in (SETUP, LOOP_PHASE)
    ]
    if earlier:
        previous = max(earlier, key=_when)
        changed = [
            (name, before.rpartition(" ")[2], after.rpartition(" ")[2])
            for name, before, after in paired_inputs(
                previous.input_signature, graph.input_signature
            )
            if before != after
        ]
        if changed:
            dtype = any(old.split("[")[0] != new.split("[")[0] for _, old, new in changed)
            shown = "; ".join(
                f"{_input_name(name)} {_kind(old, new)} {old} -> {new}"
                for name, old, new in changed
            )
            return ("input_dtype" if dtype else "input_shape"), f"{shown}; {SERVED_DETAIL}"
    # No input changed: the ops did (the rule treats it as it treats added ops, so
    # a logging graph every k steps that recurs is periodic, as when it compiles).
    return "graph_structure", SERVED_DETAIL


def _input_name(name: str) -> str:
    """``input 0``, or a script's ``input train.py:42`` (the line that moved it)."""
    folder, _, last = name.rpartition("/")
    return f"input {last}" if folder else name


def _kind(old: str, new: str) -> str:
    return "dtype" if old.split("[")[0] != new.split("[")[0] else "shape"
