"""Value reads ranked by what they cost per step, with the fix for each.

A value read (``.item()``, ``print(tensor)``, ``bool(tensor)``, ``.cpu()``)
makes torch_xla run the step so far as a graph of its own and copy the value to
the host; the step's own graph then computes the same ops again, because their
results were pending IR, not device data. The child times every read that did
not compile (``xlacli.child.value_reads``): wall, the process's CPU, and the
calling thread's own CPU. The calling thread's work (building and hashing the
forced graph, and the formatting xlacli's own debug switches add to every
execution, several times the rest on a small graph) is taken off: what is left
is the forced graph's run, the wait for it and the copy, the part a step closure
saves (a closure still copies the value, after the step's graph ran: a scalar's
copy is microseconds). A read costs the median over the run's steps, in wall
time and in the CPU time of the threads that ran the forced graph (on XLA:CPU,
its work whatever the machine's load). Reports without read timings (an older
xlacli) fall back to the forced graph's median execution time.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable

from xlacli.analysis.advice.inputs import AdviceInputs, ReadTimes
from xlacli.analysis.recompiles.hints import CLOSURE_READ_HINT
from xlacli.parse.frames import Frame, in_step_closure, parse_frame
from xlacli.report.advice import ValueReadCost
from xlacli.report.run_report import GraphRecord
from xlacli.run_folder.step_events import StepEvent

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

# A read of a value already computed (eager mode, after the step's sync): no graph
# to move, but each read waits for the device and copies.
UNFORCED_FIX = (
    "each read waits for the device and copies: read every k steps, or keep the values"
    " on the device (accumulate tensors) and read them once"
)


def rank_value_reads(inputs: AdviceInputs) -> tuple[ValueReadCost, ...]:
    """One entry per line that read a value, most expensive first: the lines whose
    reads forced a graph, and the lines the child timed reading values that were
    already computed (eager mode; a library's ``.tolist()`` after the step's sync),
    which still wait for the device and copy."""
    steps = max(1, inputs.steps)
    by_site: dict[str | None, list[GraphRecord]] = defaultdict(list)
    for graph in (artifacts.graph for artifacts in inputs.graphs):
        if graph.trigger == "host_sync":
            by_site[graph.site].append(graph)
    costs = [_forced(inputs, site, graphs, steps) for site, graphs in by_site.items()]
    costs.extend(
        _measured(inputs, site, reads, steps)
        for site, reads in inputs.read_counts.items()
        if site is not None and site not in by_site and reads > 0
    )
    return tuple(sorted(costs, key=lambda cost: (-cost.extra_time_s, cost.location or "")))


def _forced(
    inputs: AdviceInputs, site: str | None, graphs: list[GraphRecord], steps: int
) -> ValueReadCost:
    """A line whose reads forced graphs of their own (``host_sync``)."""
    executions = sum(graph.executions for graph in graphs)
    source = _source_line(inputs, site)
    kind = read_kind(source)
    wall, cpu = read_time(inputs.read_times.get(site, ()))
    if wall is None:  # no timings: the forced executions alone
        per_step = sum(graph.executions * (graph.execute_time_s or 0.0) for graph in graphs)
        extra = per_step / steps
    else:
        extra = wall * executions / steps
    # A read already in a step closure is not told to move into one.
    in_closure = any(in_step_closure(_frames(graph)) for graph in graphs)
    return ValueReadCost(
        location=site,
        kind=kind,
        source=source,
        reads_per_step=executions / steps,
        executions_per_step=executions / steps,
        extra_time_s=extra,
        fix=CLOSURE_READ_HINT if in_closure else FIXES[kind],
        read_time_s=wall,
        read_cpu_time_s=cpu,
    )


def _measured(inputs: AdviceInputs, site: str, reads: int, steps: int) -> ValueReadCost:
    """A line the child timed reading values no graph had to be forced for."""
    source = _source_line(inputs, site)
    kind = read_kind(source)
    wall, cpu = read_time(inputs.read_times.get(site, ()))
    return ValueReadCost(
        location=site,
        kind=kind,
        source=source,
        reads_per_step=reads / steps,
        executions_per_step=0.0,
        extra_time_s=(wall or 0.0) * reads / steps,
        fix=UNFORCED_FIX,
        read_time_s=wall,
        read_cpu_time_s=cpu,
    )


def _frames(graph: GraphRecord) -> tuple[Frame, ...]:
    return tuple(frame for text in graph.frames if (frame := parse_frame(text)) is not None)


def read_time(times: ReadTimes) -> tuple[float | None, float | None]:
    """One read's wall and CPU seconds, the calling thread's own CPU taken off:
    the median over the steps of each step's mean read; (None, None) without timings."""
    if not times:
        return None, None
    wall = statistics.median(max(0.0, wall - host) for wall, _cpu, host in times)
    return wall, statistics.median(max(0.0, cpu - host) for _wall, cpu, host in times)


def read_times_by_site(events: Iterable[StepEvent]) -> dict[str | None, ReadTimes]:
    """Per user line, each step's mean read (wall, CPU, calling thread's CPU; s) from
    the child's ``read_times`` (``[user line, library line, reads, wall, CPU, host]``, ns)."""
    sums: dict[tuple[int, str | None], list[float]] = {}
    for index, event in enumerate(events):
        for user, _library, reads, *times_ns in event.measures.read_times:
            total = sums.setdefault((index, user), [0.0, 0.0, 0.0, 0.0])
            for position, value in enumerate((reads, *times_ns[:3])):
                total[position] += value
    by_site: dict[str | None, list[tuple[float, float, float]]] = defaultdict(list)
    for (_index, user), (reads, wall_ns, cpu_ns, host_ns) in sums.items():
        if reads > 0:
            by_site[user].append(
                (wall_ns / reads / 1e9, cpu_ns / reads / 1e9, host_ns / reads / 1e9)
            )
    return {site: tuple(times) for site, times in by_site.items()}


def reads_by_site(steps: Iterable[StepEvent]) -> dict[str | None, int]:
    """Per user line, the value reads of the loop's steps (``read_counts``; a run
    recorded before them: the reads the child timed)."""
    counts: dict[str | None, int] = defaultdict(int)
    for event in steps:
        rows = event.measures.read_counts or event.measures.read_times or ()
        for user, _library, reads, *_times in rows:
            counts[user] += int(reads)
    return dict(counts)


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
