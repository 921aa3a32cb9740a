"""The advisors in the order they run, each writing its own report section.

Each is a pure function of ``AdviceInputs`` (see ``advice_inputs.py``); the
report assembler calls ``with_advice`` once the graphs and compile events exist.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from xlacli.analysis.advice_inputs import AdviceInputs
from xlacli.analysis.buckets import advise_buckets
from xlacli.analysis.compile_cost import compile_cost
from xlacli.analysis.scan_advice import advise_scan
from xlacli.analysis.value_reads import rank_value_reads
from xlacli.report import RunReport

# report field -> the analysis that fills it
ADVISORS: tuple[tuple[str, Callable[[AdviceInputs], Any]], ...] = (
    ("compile_cost", compile_cost),
    ("scan_advice", advise_scan),
    ("bucket_advice", advise_buckets),
    ("value_read_costs", rank_value_reads),
)


def with_advice(inputs: AdviceInputs) -> RunReport:
    """The report with every advice section filled."""
    sections = {name: advisor(inputs) for name, advisor in ADVISORS}
    return dataclasses.replace(inputs.report, **sections)
