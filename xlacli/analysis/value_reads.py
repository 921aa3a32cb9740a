"""Value reads ranked by what they cost per step, with the fix for each.

A value read (``.item()``, ``print(tensor)``, ``bool(tensor)``, ``.cpu()``)
makes torch_xla run the step so far as a graph of its own and copy the value to
the host; the step's own graph then computes the same ops again, because their
results were pending IR, not device data. What a read costs per step is that
extra graph's executions (their median time: a graph's first run pays one-time
costs) plus the copy, which torch_xla does not time apart from the execution.
"""

from __future__ import annotations

import re
from collections import defaultdict

from xlacli.analysis.advice_inputs import AdviceInputs
from xlacli.report.advice import ValueReadCost
from xlacli.report.run import GraphRecord

_KINDS = (  # the first that matches the read's line
    ("print", re.compile(r"\bprint\(|\blog\w*\(|\.info\(|\.write\(")),
    ("item", re.compile(r"\.item\(\)|\.tolist\(\)|\bfloat\(|\bint\(")),
    ("bool", re.compile(r"^\s*(if|elif|while|assert)\b|\bbool\(|\bany\(|\ball\(")),
    ("to_host", re.compile(r"\.cpu\(\)|\.numpy\(\)|\.to\(['\"]cpu")),
)
FIXES = {
    "print": "log it in a step closure, after the step's graph ran: "
    "`xm.add_step_closure(lambda v: print(v.item()), args=(loss,))`, or every k steps",
    "item": "keep the value on the device (accumulate tensors, read once at the end), or read it "
    "in `xm.add_step_closure` so the step's graph runs first; else read every k steps",
    "bool": "keep the decision on the device (`torch.where`, masks) instead of branching in Python",
    "to_host": "copy to the host in `xm.add_step_closure`, or every k steps, not inside the step",
}


def rank_value_reads(inputs: AdviceInputs) -> tuple[ValueReadCost, ...]:
    """One entry per line that read a value, most expensive first."""
    steps = max(1, inputs.steps)
    by_site: dict[str | None, list[GraphRecord]] = defaultdict(list)
    for graph in (artifacts.graph for artifacts in inputs.graphs):
        if graph.trigger == "host_sync":
            by_site[graph.site].append(graph)
    costs = []
    for site, graphs in by_site.items():
        executions = sum(graph.executions for graph in graphs)
        time_s = sum(graph.executions * (graph.execute_time_s or 0.0) for graph in graphs)
        source = _source_line(inputs, site)
        kind = read_kind(source)
        costs.append(
            ValueReadCost(
                location=site,
                kind=kind,
                source=source,
                reads_per_step=executions / steps,
                executions_per_step=executions / steps,
                extra_time_s=time_s / steps,
                fix=FIXES[kind],
            )
        )
    return tuple(sorted(costs, key=lambda cost: (-cost.extra_time_s, cost.location or "")))


def read_kind(source: str) -> str:
    """What kind of read a line of code makes: print, item, bool or to_host."""
    return next((kind for kind, pattern in _KINDS if pattern.search(source)), "item")


def _source_line(inputs: AdviceInputs, site: str | None) -> str:
    if site is None or ":" not in site:
        return ""
    file, _, line = site.rpartition(":")
    text = inputs.read_source(file)
    lines = text.splitlines() if text else []
    number = int(line) if line.isdigit() else 0
    return lines[number - 1].strip() if 0 < number <= len(lines) else ""
