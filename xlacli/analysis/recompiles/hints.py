"""A concrete fix for each recompile category."""

from __future__ import annotations

# A read already inside ``xm.add_step_closure``: the closure runs after the step's graph;
# what it reads must be made by that graph, or computed on the host.
CLOSURE_READ_HINT = (
    "compute what the closure reads in the step, before torch_xla.sync(), so that the "
    "step's graph makes it (`logged = (loss * 100).round()`, then "
    "`xm.add_step_closure(lambda v: print(v.item()), args=(logged,))`), or read a tensor "
    "the step made and compute on the host (`loss.item() * 100`)"
)

# A graph_structure change at a line with no branch around it: the ops differ for
# another reason (a library's own branch, a value a loop count depends on).
NO_BRANCH_HINT = (
    "the ops this line makes differ from the graph before (no Python branch around it: "
    "a library's own branch, or a count that changes); `xlacli diff-hlo RUN A B` on the two "
    "graphs shows the ops, and each step should make the same ones"
)


def branch_above(location: str) -> bool:
    """Whether a Python branch encloses the line at ``file:line`` (or is on it):
    an ``if``/``else``, a conditional expression, a ``while`` or a ``match``
    within its function (``analysis/recompiles/loop_source.py``). Unreadable: assume one."""
    from xlacli.analysis.recompiles.loop_source import in_branch
    from xlacli.paths import split_location

    file, number = split_location(location)
    if number is None:
        return True
    found = in_branch(_read_text, file, number)
    return True if found is None else found


def _read_text(file: str) -> str | None:
    try:
        with open(file, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


HINTS = {
    "first_compile": None,
    "input_shape": (
        "pad or bucket input shapes to a few sizes (e.g. round lengths up to a multiple of 64) "
        "so graphs are reused; torch_xla.compile(max_different_graphs=N) makes surprises errors"
    ),
    "input_dtype": "keep input dtypes fixed across steps: cast in get_inputs or the data loader",
    "intermediate_shape": (
        "a size inside the step changes: slice to a fixed size and mask the rest, or bucket "
        "the size so only a few shapes occur"
    ),
    "graph_structure": (
        "a Python branch changes the ops: compute both sides and pick with torch.where, or "
        "make the branch the same every step"
    ),
    "constant_value": (
        "a Python scalar is baked into the graph: pass it as a tensor "
        "(torch.tensor(value, device=...)) so it becomes a graph input"
    ),
    "data_dependent_shape": (
        "the shape depends on tensor values: keep shapes static (torch.where(mask, x, 0), "
        "masked sums) instead of boolean indexing or nonzero"
    ),
    "host_sync": (
        "move .item(), print(tensor), .cpu() and `if tensor:` after torch_xla.sync(), or log "
        "with xm.add_step_closure; keep decisions on the device with torch.where"
    ),
    "optimizer_state": None,  # expected once: nothing to fix
    "carried_over": (
        "a tensor made elsewhere was still alive when this sync ran, and never synced where it "
        "was made: call torch_xla.sync() after the loop that made it, `del` it once read, or "
        "read what you need in a step closure"
    ),
    "lazy_artefact": None,  # the same program traced twice: nothing to fix
    "unsynced_loop": (
        "call torch_xla.sync() once per iteration so each iteration runs the same graph; "
        "keep shapes fixed with a static KV cache or a preallocated buffer, and wrap the loop "
        "body in torch_xla.compile"
    ),
    "sharding": (
        "an input's sharding changed, so the graph was partitioned again: give each tensor one "
        "sharding (mark_sharding with the same spec every step), or reshard inside the graph"
    ),
    "unknown": "compare the two graphs: xlacli diff-hlo on their hlo.before.txt files",
    # torch.compile (Dynamo): see xlacli.analysis.dynamo.record
    "graph_break": (
        "Dynamo stops the FX graph here and resumes in a new frame: keep values on the device "
        "(torch.where(cond, a, b) instead of `if t.item():`, no print(tensor) or .tolist() in "
        "the compiled code), or move the call out of the compiled function"
    ),
    "dynamo_guard": (
        "a Dynamo guard failed, so the frame was traced again: for a size, pad inputs to a few "
        "bucket sizes, or torch._dynamo.mark_dynamic(x, dim) / dynamic=True (torch_xla still "
        "compiles one XLA graph per size), or dynamic=False to keep one static graph per size; "
        "for a Python value, pass it as a tensor"
    ),
}

CATEGORIES = tuple(HINTS)


def hint_for(category: str) -> str | None:
    """The fix hint for a category (None for a first compile and expected ones)."""
    return HINTS.get(category)
