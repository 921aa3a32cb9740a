"""Every explained recompile held against the structural diff of its two graphs.

The explainer reads the lazy IR and the step's inputs, and names a category; the
HLO diff (``xlacli diff-hlo``) pairs the two modules instruction by instruction
and says what changed. Where they disagree the diff is right: a change that the
diff shows only in the parameters' shapes is an input's shape whatever the IR
suggested, only in constants a baked-in value, and a category that needs added
or removed ops (a branch, a carried-over tensor) is wrong when the diff has none.
Each disagreement is kept in the report (``explanation_checks``), and the cause
becomes the diff's story.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from xlacli.analysis.recompiles.hints import hint_for
from xlacli.hlo.changes import Change, ModuleDiff
from xlacli.hlo.diff import diff_modules
from xlacli.hlo.model import HloModule
from xlacli.report.run_report import CompileEvent, ExplanationCheck

# Categories whose story is ops added or removed; those whose story is a shape.
STRUCTURE = frozenset(
    {"graph_structure", "carried_over", "host_sync", "unsynced_loop", "optimizer_state"}
)
SHAPES = frozenset({"input_shape", "input_dtype", "intermediate_shape", "data_dependent_shape"})
# The diff cannot judge these (a sharding lives in attributes the partitioner
# rewrites; an artefact is the same program traced twice; an eager op).
UNJUDGED = frozenset(
    {"first_compile", "sharding", "lazy_artefact", "unknown", "python_accumulator"}
)
MAX_CHECKED_INSTRUCTIONS = 200_000  # both modules together: beyond, left unchecked


@dataclass(frozen=True)
class DiffFacts:
    """What the structural diff of two graphs says changed."""

    parameters: tuple[str, ...]  # ``parameter 0 f32[8,16] -> f32[12,16]``
    dtypes: bool  # a parameter's element type changed
    constants: int
    added: int
    removed: int
    reshaped: int  # other instructions whose shape changed
    has_parameters: bool = True  # a graph without parameters (an eager op on host
    # data, a constant made on the device) has no input the diff could see change

    def story(self) -> str:
        parts = []
        if self.added or self.removed:
            parts.append(f"{self.added} instructions added, {self.removed} removed")
        if self.parameters:
            parts.append("; ".join(self.parameters[:3]))
        if self.constants:
            parts.append(f"{self.constants} constants changed")
        if self.reshaped and not self.parameters:
            parts.append(f"{self.reshaped} instructions changed shape")
        return "; ".join(parts) or "no instruction changed"


def diff_facts(diff: ModuleDiff) -> DiffFacts:
    parameters: list[str] = []
    dtypes = False
    constants = reshaped = 0
    for change in diff.changes:
        if change.kind != "changed" or change.left is None or change.right is None:
            continue
        if change.right.opcode == "parameter" and "shape" in change.reasons:
            parameters.append(f"{_name(change)} {change.left.shape} -> {change.right.shape}")
            dtypes = dtypes or _dtype(change.left.shape) != _dtype(change.right.shape)
        elif "constant" in change.reasons:
            constants += 1
        elif "shape" in change.reasons:
            reshaped += 1
    return DiffFacts(
        tuple(parameters),
        dtypes,
        constants,
        diff.count("added"),
        diff.count("removed"),
        reshaped,
        has_parameters=bool(
            diff.left.opcodes.get("parameter") or diff.right.opcodes.get("parameter")
        ),
    )


def _name(change: Change) -> str:
    assert change.right is not None
    return f"parameter {change.right.name}"


def _dtype(shape: str) -> str:
    return shape.split("[", 1)[0]


def disagreement(category: str, facts: DiffFacts) -> str | None:
    """The diff's category when it contradicts ``category``, else None."""
    if category in UNJUDGED:
        return None
    structural = bool(facts.added or facts.removed)
    if category in STRUCTURE and not structural:
        if facts.parameters:
            return "input_dtype" if facts.dtypes else "input_shape"
        if facts.constants:
            return "constant_value"
        return None if facts.reshaped else "unknown"
    inputs_seen = facts.has_parameters
    if (
        category in ("input_shape", "input_dtype")
        and inputs_seen
        and not facts.parameters
        and not structural
    ):
        if facts.constants:
            return "constant_value"
        return "intermediate_shape" if facts.reshaped else None
    moved = category == "constant_value" and not facts.constants and not structural
    if moved and facts.parameters:
        return "input_dtype" if facts.dtypes else "input_shape"
    return None


def checked_events(
    events: Sequence[CompileEvent], module_of: Callable[[str], HloModule | None]
) -> tuple[tuple[CompileEvent, ...], tuple[ExplanationCheck, ...]]:
    """The events with each compared compile held against its diff: where they
    disagree, the diff's category and story, and the disagreement recorded."""
    checked: list[CompileEvent] = []
    checks: list[ExplanationCheck] = []
    for event in events:
        if event.compared_with is None or event.cause.category in UNJUDGED:
            checked.append(event)
            continue
        old, new = module_of(event.compared_with), module_of(event.graph_hash)
        if old is None or new is None or _size(old) + _size(new) > MAX_CHECKED_INSTRUCTIONS:
            checked.append(event)
            continue
        facts = diff_facts(diff_modules(old, new))
        corrected = disagreement(event.cause.category, facts)
        if corrected is None:
            checked.append(event)
            continue
        checks.append(
            ExplanationCheck(
                graph_hash=event.graph_hash,
                compared_with=event.compared_with,
                explained=event.cause.category,
                diff=corrected,
                diff_story=facts.story(),
            )
        )
        cause = replace(
            event.cause,
            category=corrected,
            detail=f"{facts.story()} (the structural diff of the two graphs)",
            hint=hint_for(corrected),
            also=(event.cause, *event.cause.also),
        )
        checked.append(replace(event, cause=cause))
    return tuple(checked), tuple(checks)


def _size(module: HloModule) -> int:
    return sum(len(computation.instructions) for computation in module.computations)
