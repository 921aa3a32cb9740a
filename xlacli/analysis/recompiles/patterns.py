"""Known lazy-tensor patterns that a plain before/after comparison misreads.

- Optimizer state made at the first ``opt.step()`` (SGD momentum buffers,
  Adam's moments and step counts) is created inside that step's graph and
  read as a graph input from the next update on: one more graph, once. It
  is warm-up, not a user branch.
- A graph that differs from an earlier one only by a node torch_xla built
  twice (the first step shares a weight's transpose between forward and
  backward, later steps rebuild it) is the same program, compiled once more.
- A loop that reads a value every iteration but never syncs (a greedy
  decode, ``model.generate()`` on the lazy path) cuts a graph at each read;
  each holds the whole loop so far, so the graph grows token by token and
  every iteration compiles. That is one pattern at the loop's line, with
  fixes of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from xlacli.analysis.recompiles.accumulator import accumulator_cause
from xlacli.analysis.recompiles.compiled import (
    CompiledGraph,
    ExplainContext,
    changed_node,
    is_special_scalar_swap,
    make_cause,
    signature_change,
)
from xlacli.analysis.recompiles.hints import hint_for
from xlacli.analysis.recompiles.ir_compare import IrDifference
from xlacli.parse.ir_dump import IrGraph, IrNode
from xlacli.paths import source_line, split_location
from xlacli.report.run_report import CompileCause
from xlacli.units import counted

# torch/optim/'s files, as the IR names them (base names only).
OPTIMIZER_FILES = frozenset(
    {
        "optimizer.py",
        "sgd.py",
        "adam.py",
        "adamw.py",
        "adagrad.py",
        "adadelta.py",
        "adamax.py",
        "asgd.py",
        "nadam.py",
        "radam.py",
        "rmsprop.py",
        "rprop.py",
        "sparse_adam.py",
        "_functional.py",
        "lbfgs.py",
    }
)

DEVICE_DATA = "xla::device_data"
SHARDING_OP = "xla::custom_sharding"
SHARDING_OPS_HINT = (
    "expected once, after the first step; to compile one graph, give the parameters "
    "their sharding before the loop (xs.mark_sharding, replicated: (None,) * dim)"
)
OPTIMIZER_STATE_DETAIL = (
    "optimizer state created at the first opt.step() (momentum buffers, Adam moments, step "
    "counts) is read as a graph input from the next update on: expected once, nothing to fix"
)
OPTIMIZER_BRANCH_HINT = (
    "the optimizer updates only on some steps (gradient accumulation, a branch around "
    "opt.step()): two graphs, with and without the update, are expected; keep it to those "
    "two (the same accumulation count every time, no other branch around the update)"
)
LIBRARY_READ_HINT = (
    "a library reads a tensor value here, called from this line: look at the library line "
    "for an argument that skips the read (e.g. error_if_nonfinite=False, no mask when "
    "nothing is masked, a precomputed flag), or make the call after torch_xla.sync()"
)


def lazy_artefact_detail(ops: tuple[str, ...]) -> str:
    """A graph that differs from an earlier one only by a node built twice."""
    names = ", ".join(sorted(set(ops)))
    return (
        f"the same program: torch_xla shared a node ({names}) in one graph and built it "
        "twice in the other (step 0 reuses a weight's transpose from the forward pass in "
        "backward; later steps rebuild it): expected once, nothing to fix"
    )


def is_optimizer_node(
    node: IrNode | None,
    library_location: str | None = None,
    optimizer_files: frozenset[str] = frozenset(),
) -> bool:
    """Whether a node was made by an optimizer's step: torch.optim's (by the IR's
    base name or the resolved path), or any optimizer the run stepped
    (``optimizer_files``: a library's file, or the user's ``file:first-last``
    class lines, as the child saw them: child/backward_calls.py)."""
    if library_location is not None:
        file, line = split_location(library_location)
        if "/torch/optim/" in library_location or in_optimizer_code(
            file, line, optimizer_files, by_name=False
        ):
            return True
    location = node.location if node is not None else None
    if location is None:
        return False
    name = PurePath(location.file).name
    return name in OPTIMIZER_FILES or in_optimizer_code(
        location.file, location.line, optimizer_files, by_name=True
    )


def in_optimizer_code(
    file: str, line: int | None, optimizer_files: frozenset[str], *, by_name: bool
) -> bool:
    """Whether ``file:line`` is in one of the optimizers' code (``by_name``: the IR
    keeps a file's base name only)."""
    for entry in optimizer_files:
        path, _, span = _span(entry)
        same = PurePath(path).name == PurePath(file).name if by_name else path == file
        if not same:
            continue
        if not span:
            return True
        first, _, last = span.partition("-")
        if line is not None and int(first) <= line <= int(last):
            return True
    return False


def _span(entry: str) -> tuple[str, str, str]:
    """``/a/b.py:10-40`` -> (``/a/b.py``, ":", ``10-40``); a whole file has no span."""
    path, sep, span = entry.rpartition(":")
    if sep and "-" in span and span.replace("-", "").isdigit():
        return path, sep, span
    return entry, "", ""


def runs_optimizer(ir: IrGraph | None, optimizer_files: frozenset[str] = frozenset()) -> bool:
    """Whether a graph holds an optimizer's update."""
    return ir is not None and any(
        is_optimizer_node(node, None, optimizer_files) for node in ir.nodes
    )


def unsynced_loop_detail(first_nodes: int, nodes: int, reads: int) -> str:
    """What an unsynced loop did so far in this step."""
    return (
        f"the graph grows inside a loop that never syncs: {first_nodes} -> {nodes} IR nodes "
        f"over {reads} value reads in one step, each compiling a larger graph"
    )


# A value read that compiles this many times in one step is a loop (two reads
# on one line, `a.isnan() or a.isinf()`, are not).
LOOP_COMPILES = 3


def pattern_cause(
    previous: Sequence[CompiledGraph],
    old: CompiledGraph,
    new: CompiledGraph,
    difference: IrDifference | None,
    context: ExplainContext,
    in_loop: bool,
) -> CompileCause | None:
    """A known lazy-tensor pattern (see ``patterns``), else None."""
    if difference is None or difference.kind == "none" or old.ir is None or new.ir is None:
        return None
    if (
        in_loop
        and old.step == new.step
        and old is previous[-1]
        and len(new.ir.nodes) > len(old.ir.nodes)
        and old.frames == new.frames
    ):
        user, library = context.locator.trigger(new.frames)
        in_step = [g for g in previous if g.step == new.step and g.ir is not None]
        first = in_step[0].ir
        assert first is not None
        detail = unsynced_loop_detail(len(first.nodes), len(new.ir.nodes), len(in_step) + 1)
        return make_cause("unsynced_loop", user, library, detail)
    if (
        new.value_read
        and old.value_read
        and old.step == new.step
        and old.frames == new.frames
        and difference.kind != "shape"  # the same read on other shapes: a size changed
    ):
        # Two reads on one line (`norm.isnan() or norm.isinf()`): each cuts a graph.
        user, library = context.locator.trigger(new.frames)
        detail = "another value read on this line in the same step, cutting one more graph"
        return make_cause("host_sync", user, library, detail, hint=read_hint(library))
    accumulator = accumulator_cause(old, new, difference, context, source_line)
    if accumulator is not None:  # the same answer whatever else the mode adds (SPMD)
        return accumulator
    node, owner = changed_node(difference, old, new)
    if (
        difference.kind != "ops"
        or node is None
        or is_special_scalar_swap(difference)
        or signature_change(old, new) is not None
    ):
        return None
    sharding = sharding_ops_cause(new, difference, context)
    if sharding is not None:
        return sharding
    user, library = context.locator.node(node, owner)
    files = context.optimizer_files
    first_update = next((g for g in previous if runs_optimizer(g.ir, files)), None)
    # Optimizer state is tensors the first update made that the next one reads:
    # new graph inputs. An optimizer without state (SGD without momentum) adds none.
    has_new_inputs = DEVICE_DATA in difference.added
    if first_update is old and has_new_inputs and is_optimizer_node(node, library, files):
        return make_cause("optimizer_state", user, library, OPTIMIZER_STATE_DETAIL)
    return None


def sharding_ops_cause(
    new: CompiledGraph, difference: IrDifference, context: ExplainContext
) -> CompileCause | None:
    """SPMD: the ops that changed are mostly sharding annotations
    (``xla::custom_sharding``): the computation got other shardings, so the
    answer is ``sharding``, never a pattern of the computation."""
    added = difference.added.count(SHARDING_OP)
    removed = difference.removed.count(SHARDING_OP)
    others = len(difference.added) + len(difference.removed) - added - removed
    if new.ir is None or added + removed == 0 or others > added + removed:
        return None  # mostly other ops: a change of the computation itself
    node = next((n for n in new.ir.nodes if n.op == SHARDING_OP), None)
    user, library = context.locator.node(node, new) if node is not None else (None, None)
    detail = (
        f"the shardings changed: {counted(added, 'sharding annotation')} "
        f"added, {removed} removed ({SHARDING_OP}), as when the first step's outputs "
        "(updated parameters) come back with a sharding they did not have as inputs"
    )
    return make_cause("sharding", user, library, detail, hint=SHARDING_OPS_HINT)


def read_hint(library: str | None) -> str | None:
    return LIBRARY_READ_HINT if library else hint_for("host_sync")
