"""The advice sections of the run report: compile cost by source line, and the
scan, bucket and value-read advisors (``xlacli.analysis.advice.compile_cost``,
``scan_advice``, ``buckets``, ``value_reads`` write them).

Each section is a frozen dataclass with its own reader, so a report saved before
the sections existed loads with them empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any, TypeVar


@dataclass(frozen=True)
class LineCost:
    """What one source line put into the compiled graphs."""

    # The user's file:line, or a named bucket (``compile_cost.OPTIMIZER_STEP``...);
    # None: data and constants (parameters, inputs), no line's work.
    location: str | None
    ir_nodes: int
    hlo_instructions: int  # before XLA's optimizations
    optimized_hlo_instructions: int
    share: float  # of the HLO instructions (before optimization) counted
    compile_time_s: float  # compile time apportioned by instruction count: an estimate
    # Of hlo_instructions, those of the backward pass that differentiate the line.
    backward_hlo_instructions: int = 0
    # The library line the ops came through when no line of the user's is on their
    # stack (the row's location is then the graph's site, or a named bucket).
    library_location: str | None = None


@dataclass(frozen=True)
class GraphLineCost:
    """One graph's instructions by source line."""

    graph_hash: str
    hlo_instructions: int
    compile_time_s: float
    lines: tuple[LineCost, ...]  # biggest first


@dataclass(frozen=True)
class CompileCost:
    """Where the compiled graphs come from, summed over the run's distinct graphs."""

    hlo_instructions: int
    compile_time_s: float
    lines: tuple[LineCost, ...]  # biggest first
    graphs: tuple[GraphLineCost, ...] = ()


@dataclass(frozen=True)
class ScanAdvice:
    """N structurally identical layers called in a loop: a ``scan_layers`` candidate."""

    graph_hash: str
    call_site: str  # file:line of the call ``hidden = layer(hidden)``
    module_list: str | None  # the loop's iterable, ``self.layers``
    layer_class: str | None  # the layers' ``nn.Module`` class
    layers: int
    identical: bool  # False: the layers differ (``differing`` says where)
    block_instructions: int  # HLO instructions of all the layers together
    share: float  # of the graph's HLO instructions
    graph_compile_time_s: float  # one compilation's
    predicted_compile_time_s: float  # the graph's compile time with scan_layers
    predicted_saving_time_s: float  # negative: scanning would cost more than it saves
    lines: tuple[str, ...]  # the layer's own lines, biggest first
    differing: tuple[str, ...] = ()  # ops found in only some layers
    blockers: tuple[str, ...] = ()  # what would stop scan_layers here
    code: str = ""  # empty unless advised
    # The cost model (analysis/advice/scan_cost.py): advised only when the layers make
    # enough of the graph and the saving pays (analysis/advice/scan_verdict.py).
    pays: bool = False
    first_layer_compile_time_s: float = 0.0  # the graph with one layer
    per_layer_compile_time_s: float = 0.0  # each further layer
    loop_compile_time_s: float = 0.0  # the scan loop's own compile
    break_even_layers: int = 0  # the fewest layers for which scanning saves
    cost_basis: str = ""
    # A training step's optimizer update (every parameter's), which scanning keeps.
    optimizer_instructions: int = 0
    optimizer_share: float = 0.0  # of the graph's HLO instructions
    # Scanned, each layer's update compiles afresh (its gradient a slice): per layer.
    sliced_update_compile_time_s: float = 0.0
    # Why not advised (scan_verdict's codes: share, sliced_update, loop, noise,
    # layers_differ); empty when advised, and in reports written before them.
    not_advised_because: tuple[str, ...] = ()
    advised_from_layers: int = 0  # with not_advised_because: 0 is at no depth


@dataclass(frozen=True)
class BucketOption:
    """One way to bucket the observed sizes: k edges."""

    edges: tuple[int, ...]
    compiles: int  # distinct padded sizes the run would have compiled
    padding_waste: float  # padded elements / elements processed


@dataclass(frozen=True)
class BucketAdvice:
    """A recompiling dimension, its observed sizes and the bucket edges to pad to."""

    location: str | None  # the user's line behind the changing size
    category: str  # input_shape, intermediate_shape, data_dependent_shape
    dimension: str  # "input 0, dim 1"
    sizes: tuple[tuple[int, int], ...]  # (size, steps that saw it), sorted by size
    steps: int  # steps the sizes came from
    compiles_seen: int  # compiles the run paid at this site
    options: tuple[BucketOption, ...]  # one per number of buckets, fewest first
    chosen: int  # index into options
    code: str = ""  # empty: no bucketing pays, keep the sizes
    # Tensors whose size changes with this one, padded with it (a batch's labels).
    padded_with: tuple[str, ...] = ()
    # (tensor, loss op) of the padded tensors a loss takes as its target
    # (``nll_loss``: padded with its ignored index, -100).
    targets: tuple[tuple[str, str], ...] = ()
    drop_last: bool = False  # the only odd size is an epoch's last batch: drop it first
    also: tuple[str, ...] = ()  # the site's other changing dimensions, one note each


@dataclass(frozen=True)
class ValueReadCost:
    """A line that reads a device value on the host, and what it costs per step."""

    location: str | None
    kind: str  # "item", "print", "bool", "to_host"
    source: str  # the line's code
    reads_per_step: float
    executions_per_step: float  # extra graph executions the reads force
    extra_time_s: float  # per step: reads x read_time_s (older reports: the executions' time)
    fix: str
    # One read's time (median; reads that compiled left out), the calling thread's own
    # work taken off: the forced graph's run, the wait, the copy. None: not timed.
    read_time_s: float | None = None
    read_cpu_time_s: float | None = None  # CPU of the threads that ran the forced graph


def compile_cost_from_dict(data: Any) -> CompileCost | None:
    """The compile-cost section of a saved report; None when it has none."""
    if not data:
        return None
    return CompileCost(
        hlo_instructions=data.get("hlo_instructions", 0),
        compile_time_s=data.get("compile_time_s", 0.0),
        lines=_all(_known(LineCost, line) for line in data.get("lines", ())),
        graphs=tuple(
            GraphLineCost(
                graph_hash=graph["graph_hash"],
                hlo_instructions=graph.get("hlo_instructions", 0),
                compile_time_s=graph.get("compile_time_s", 0.0),
                lines=_all(_known(LineCost, line) for line in graph.get("lines", ())),
            )
            for graph in data.get("graphs", ())
        ),
    )


def scan_advice_from_dict(data: Any) -> tuple[ScanAdvice, ...]:
    tuples = ("lines", "differing", "blockers", "not_advised_because")
    return _all(_known(ScanAdvice, item, tuples) for item in data or ())


def bucket_advice_from_dict(data: Any) -> tuple[BucketAdvice, ...]:
    return _all(_bucket(item) for item in data or ())


def value_read_costs_from_dict(data: Any) -> tuple[ValueReadCost, ...]:
    return _all(_known(ValueReadCost, item) for item in data or ())


def _bucket(item: dict[str, Any]) -> BucketAdvice | None:
    options = [_known(BucketOption, option, ("edges",)) for option in item.get("options", ())]
    if None in options:
        return None
    sizes = tuple((int(size), int(steps)) for size, steps in item.get("sizes", ()))
    targets = tuple((str(what), str(loss)) for what, loss in item.get("targets", ()))
    return _known(
        BucketAdvice,
        {**item, "sizes": sizes, "options": tuple(options), "targets": targets},
        ("padded_with", "also"),
    )


T = TypeVar("T")


def _known(cls: type[T], item: dict[str, Any], tuples: tuple[str, ...] = ()) -> T | None:
    """``cls`` from the keys it knows (a report written by a newer xlacli may have
    more), its list fields back to tuples; None when a required key is missing."""
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    values = {k: tuple(v) if k in tuples else v for k, v in item.items() if k in names}
    try:
        return cls(**values)
    except TypeError:  # a key it needs is missing: leave the item out, keep the report
        return None


def _all(items: Iterable[T | None]) -> tuple[T, ...]:
    return tuple(item for item in items if item is not None)
