"""The scan advisor's stacks priced (``scan_cost.py``) and judged (``scan_verdict.py``).

Each graph's instructions split into fresh and repeated content: the identical
layers after the first, and the optimizer's update of parameters like another's,
are repeated. The cost model's scale comes from the graph's own compile; its
fresh/repeated ratio is fitted over the run's graphs when they allow it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from xlacli.analysis.advice.inputs import GraphArtifacts
from xlacli.analysis.advice.optimizer_update import NO_UPDATE, OptimizerUpdate, optimizer_update
from xlacli.analysis.advice.scan_cost import DATA_OPS, GraphSize, fit_fresh_ratio, scan_cost
from xlacli.analysis.advice.scan_verdict import LAYERS_DIFFER, judge_stack
from xlacli.report.advice import ScanAdvice

# A graph and the stacks found in it, each with its layers' computations.
FoundStacks = tuple[GraphArtifacts, Sequence[tuple[ScanAdvice, int]]]


def price_stacks(found: Sequence[FoundStacks]) -> tuple[ScanAdvice, ...]:
    """Every stack found, with its graph's optimizer update apart, its predicted
    compile and its verdict."""
    updates = {artifacts.graph.hash: optimizer_update(artifacts.stacks) for artifacts, _ in found}
    sizes = {
        artifacts.graph.hash: graph_size(artifacts, advice, updates[artifacts.graph.hash])
        for artifacts, advice in found
        if artifacts.stacks
    }
    ratio = fit_fresh_ratio(list(sizes.values()))
    priced_stacks = []
    for artifacts, advice in found:
        update = updates[artifacts.graph.hash]
        for item, compute in advice:
            shown = replace(
                item,
                optimizer_instructions=update.instructions,
                optimizer_share=update.instructions / len(artifacts.stacks),
            )
            size = sizes[item.graph_hash]
            priced_stacks.append(priced(shown, compute, update, size, (ratio, len(sizes))))
    return tuple(priced_stacks)


def graph_size(
    artifacts: GraphArtifacts,
    advice: Sequence[tuple[ScanAdvice, int]],
    update: OptimizerUpdate = NO_UPDATE,
) -> GraphSize:
    """A graph's compile (one compilation's) with its fresh and repeated instructions.
    Only computations count: parameters and constants (each layer's weights among
    them, outside the layer's call) cost XLA next to nothing."""
    graph = artifacts.graph
    computed = sum(op.op_type not in DATA_OPS for op in artifacts.stacks)
    repeated = sum(compute - compute // item.layers for item, compute in advice if item.identical)
    repeated += update.repeated
    return GraphSize(
        compile_time_s=graph.compile_time_s / max(1, graph.compilations),
        fresh=computed - repeated,
        repeated=repeated,
    )


def priced(
    advice: ScanAdvice,
    compute: int,
    update: OptimizerUpdate,
    size: GraphSize,
    fit: tuple[float | None, int],  # the fitted fresh/repeated ratio, over how many graphs
) -> ScanAdvice:
    """The advice with its predicted compile and verdict; layers that differ are
    not priced. ``compute``: the layers' computations."""
    if not advice.identical:
        return replace(advice, not_advised_because=(LAYERS_DIFFER,))
    ratio, fitted_over = fit
    cost = scan_cost(
        size,
        advice.layers,
        ratio,
        fitted_over,
        layer_repeated=compute - compute // advice.layers,
        update_per_layer=update.per_layer(advice.layers),
    )
    verdict = judge_stack(advice.layers, advice.share, cost)
    return replace(
        advice,
        predicted_compile_time_s=cost.scanned_s,
        predicted_saving_time_s=cost.saving_s,
        pays=verdict.advised,
        first_layer_compile_time_s=cost.first_layer_s,
        per_layer_compile_time_s=cost.per_layer_s,
        loop_compile_time_s=cost.loop_s,
        sliced_update_compile_time_s=cost.sliced_update_s,
        break_even_layers=cost.break_even_layers,
        cost_basis=cost.basis,
        not_advised_because=verdict.because,
        advised_from_layers=verdict.advised_from_layers,
        code=advice.code if verdict.advised else "",
    )
