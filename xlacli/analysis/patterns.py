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

from xlacli.analysis.compiled import (
    CompiledGraph,
    ExplainContext,
    is_special_scalar_swap,
    make_cause,
    signature_change,
)
from xlacli.analysis.hints import hint_for
from xlacli.analysis.ir_compare import IrDifference
from xlacli.parse.ir_dump import IrGraph, IrNode
from xlacli.report.run import CompileCause

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


def is_optimizer_node(node: IrNode | None, library_location: str | None = None) -> bool:
    """Whether a node was made by torch.optim (by the IR's base name or the resolved path)."""
    if library_location is not None and "/torch/optim/" in library_location:
        return True
    location = node.location if node is not None else None
    return location is not None and PurePath(location.file).name in OPTIMIZER_FILES


def runs_optimizer(ir: IrGraph | None) -> bool:
    """Whether a graph holds an optimizer's update."""
    return ir is not None and any(is_optimizer_node(node) for node in ir.nodes)


def unsynced_loop_detail(first_nodes: int, nodes: int, reads: int) -> str:
    """What an unsynced loop did so far in this step."""
    return (
        f"the graph grows inside a loop that never syncs: {first_nodes} -> {nodes} IR nodes "
        f"over {reads} value reads in one step, each compiling a larger graph"
    )


# A value read that compiles this many times in one step is a loop (two reads
# on one line, `a.isnan() or a.isinf()`, are not).
LOOP_COMPILES = 3
# Compiles that are part of warming up wherever they happen.
EXPECTED_CATEGORIES = frozenset({"optimizer_state", "lazy_artefact"})


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
    if new.value_read and old.value_read and old.step == new.step and old.frames == new.frames:
        # Two reads on one line (`norm.isnan() or norm.isinf()`): each cuts a graph.
        user, library = context.locator.trigger(new.frames)
        detail = "another value read on this line in the same step, cutting one more graph"
        return make_cause("host_sync", user, library, detail, hint=read_hint(library))
    node = difference.new_node or difference.old_node
    if (
        difference.kind != "ops"
        or node is None
        or is_special_scalar_swap(difference)
        or signature_change(old, new) is not None
    ):
        return None
    user, library = context.locator.node(node, new)
    first_update = next((g for g in previous if runs_optimizer(g.ir)), None)
    if first_update is old and is_optimizer_node(node, library):
        return make_cause("optimizer_state", user, library, OPTIMIZER_STATE_DETAIL)
    return None


def read_hint(library: str | None) -> str | None:
    return LIBRARY_READ_HINT if library else hint_for("host_sync")
