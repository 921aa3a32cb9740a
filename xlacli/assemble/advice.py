"""The advisors (``analysis/``) as processors of the assembler (``processors.py``),
each writing its own section of the report.

Each advisor is a pure function of ``AdviceInputs`` (``advice_inputs.py``); the
processors here build those inputs from the organised run and the explained
compiles (the ``events`` section, declared before them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from xlacli.analysis.advice.buckets import advise_buckets
from xlacli.analysis.advice.compile_cost import compile_cost
from xlacli.analysis.advice.inputs import AdviceInputs, load_advice_inputs
from xlacli.analysis.advice.scan import advise_scan
from xlacli.analysis.advice.value_reads import rank_value_reads, read_times_by_site, reads_by_site
from xlacli.assemble.organise import OrganisedRun

T = TypeVar("T")


def advice_inputs(run: OrganisedRun, done: Mapping[str, Any]) -> AdviceInputs:
    """The advisors' view of the organised run (graph files read through its cache)."""
    return load_advice_inputs(
        run.paths.root,
        run.graphs,
        run.roots,
        (run.hlo.module, run.hlo.stacks),
        run.hlo.ir_nodes,
        events=tuple(done.get("events", ())),
        step_records=run.step_records,
        read_times=read_times_by_site(run.raw.log.metric_events),
        # The loop's reads: its steps' and the last one's after it (a read after a
        # step's end belongs to the next step's event, the last to the tail's).
        read_counts=reads_by_site([*run.raw.log.steps, *filter(None, [run.raw.log.tail])]),
        # Each step's loss.backward() line; "" for a backward pass no line of the
        # user's called (xlacli's --train loop): the step trained all the same.
        backward_lines={
            event.step: (event.measures.backward_sites or [""])[0]
            for event in run.raw.log.steps
            if event.measures.backward_sites or event.measures.backward_calls
        },
    )


def as_processor(advisor: Callable[[AdviceInputs], T]) -> Callable[[OrganisedRun, Any], T]:
    """``(run, done) -> section`` from an advisor of ``AdviceInputs``."""

    def run_advisor(run: OrganisedRun, done: Mapping[str, Any]) -> T:
        return advisor(advice_inputs(run, done))

    run_advisor.__doc__ = advisor.__doc__
    return run_advisor


# report field -> its processor, the sections it reads (the bucket advice reads the
# explained compiles), and whether it may run beside the others (processors.py)
ADVISORS = (
    ("compile_cost", as_processor(compile_cost), lambda: None, (), True),
    ("scan_advice", as_processor(advise_scan), tuple, (), False),
    ("bucket_advice", as_processor(advise_buckets), tuple, ("events",), False),
    ("value_read_costs", as_processor(rank_value_reads), tuple, (), False),
)
