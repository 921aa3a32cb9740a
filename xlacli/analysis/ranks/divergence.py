"""The first divergence between ranks: the step where their graphs part.

Each rank's report is a sequence of steps, each the graphs (hashes) it ran in
order; torch_xla's graph hash is the same in every process for the same graph,
so equal ranks have equal sequences. The first step where they differ is where
one rank built a different graph: a value read only rank 0 makes, a short last
batch on one shard, a branch on the rank. The ranks are grouped by what they ran
there; the largest group (on a tie, the one that compiled nothing new there,
then the one that ran fewer graphs) is the reference, and every other group's
graphs are named with the recompile cause that made them, since that cause says
why it differs from what the rank ran before, which is what the reference ran.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from xlacli.parse.frames import parse_frame
from xlacli.parse.ir_dump import IrNode
from xlacli.report.ranks import Divergence, RankAtStep, RankGraph
from xlacli.report.run_report import CompileEvent, RunReport

# The collective ops in a rank's graph (rank, graph hash) -> ("all-reduce", ...).
Collectives = Callable[[int, str], tuple[str, ...]]
# The lazy IR nodes of a rank's graph (rank, graph hash); empty when not dumped.
IrNodes = Callable[[int, str], Sequence[IrNode]]
# Causes whose user line says where the graphs part less well than the IR does.
_STRUCTURAL = ("graph_structure", "unknown")
Steps = tuple[tuple[str, ...] | None, ...]  # per step, the graphs run (None: no such step)


def find_divergence(
    reports: Mapping[int, RunReport],
    collectives: Collectives | None = None,
    ir_nodes: IrNodes | None = None,
) -> Divergence | None:
    """The first step where the ranks' graph sequences differ; None when they agree.

    ``ir_nodes``: when given, a structural difference is placed at the first
    line of the diverging graph's file whose ops the reference's graph lacks
    (a branch on the rank), compared across ranks rather than within one."""
    sequences = {rank: _sequence(report) for rank, report in reports.items()}
    length = max((len(s) for s in sequences.values()), default=0)
    for step in range(length):
        at = {rank: seq[step] if step < len(seq) else None for rank, seq in sequences.items()}
        if len(set(at.values())) > 1:
            groups = _groups(step, at, reports, collectives or _no_collectives)
            divergence = _placed_by_frames(_divergence(step, groups, reports), reports)
            return _placed_by_ir(divergence, ir_nodes) if ir_nodes else divergence
    return None


def _sequence(report: RunReport) -> Steps:
    return tuple(record.graph_hashes for record in report.step_records)


def _no_collectives(rank: int, graph: str) -> tuple[str, ...]:
    return ()


def _groups(
    step: int,
    at: Mapping[int, tuple[str, ...] | None],
    reports: Mapping[int, RunReport],
    collectives: Collectives,
) -> tuple[RankAtStep, ...]:
    by_graphs: dict[tuple[str, ...] | None, list[int]] = {}
    for rank, graphs in sorted(at.items()):
        by_graphs.setdefault(graphs, []).append(rank)

    def rank_key(item: tuple[tuple[str, ...] | None, list[int]]) -> tuple[int, ...]:
        # The reference: the most ranks; then ranks that ran the step, compiled
        # nothing new in it, and ran fewer graphs (an extra one is the anomaly).
        graphs, ranks = item
        new = any(_compiled_at(reports[r], step) for r in ranks)
        return (-len(ranks), int(graphs is None), int(new), len(graphs or ()), ranks[0])

    ordered = sorted(by_graphs.items(), key=rank_key)
    reference = ordered[0][0] or ()
    others = [graphs or () for graphs, _ in ordered[1:]]
    groups = []
    for index, (graphs, ranks) in enumerate(ordered):
        if index == 0:  # what the reference ran that some other group did not
            extra = _missing_from_some(reference, others)
        else:
            extra = list((Counter(graphs or ()) - Counter(reference)).elements())
        report = reports[ranks[0]]
        only = tuple(
            _rank_graph(report, ranks[0], h, step, collectives) for h in _ordered(graphs, extra)
        )
        inputs = _inputs_at(report, step)
        groups.append(RankAtStep(tuple(ranks), graphs or (), only, index == 0, inputs))
    return tuple(groups)


def _inputs_at(report: RunReport, step: int) -> tuple[str, ...]:
    records = [r for r in report.step_records if r.step == step]
    return records[0].input_signature if records else ()


def _missing_from_some(reference: tuple[str, ...], others: list[tuple[str, ...]]) -> list[str]:
    return [h for h in dict.fromkeys(reference) if any(h not in other for other in others)]


def _ordered(graphs: tuple[str, ...] | None, extra: list[str]) -> list[str]:
    """The extra graphs, once each, in the order the rank ran them."""
    return [h for h in dict.fromkeys(graphs or ()) if h in extra]


def _compiled_at(report: RunReport, step: int) -> bool:
    return any(event.step == step for event in report.events)


def _rank_graph(
    report: RunReport, rank: int, graph_hash: str, step: int, collectives: Collectives
) -> RankGraph:
    graph = next((g for g in report.graphs if g.hash == graph_hash), None)
    event = _compile_event(report, graph_hash, step)
    cause = event.cause if event is not None else None
    return RankGraph(
        hash=graph_hash,
        site=graph.site if graph else None,
        trigger=graph.trigger if graph else "step_end",
        cause=cause.category if cause else None,
        cause_location=cause.location if cause else None,
        cause_detail=cause.detail if cause else "",
        collectives=collectives(rank, graph_hash),
    )


def _compile_event(report: RunReport, graph_hash: str, step: int) -> CompileEvent | None:
    """The compile that made the graph: at this step, else its first."""
    events = [e for e in report.events if e.graph_hash == graph_hash]
    return next((e for e in events if e.step == step), events[0] if events else None)


def _divergence(
    step: int, groups: tuple[RankAtStep, ...], reports: Mapping[int, RunReport]
) -> Divergence:
    has_collectives = any(graph.collectives for group in groups for graph in group.only_here)
    ended = [group for group in groups if not group.graphs]  # no such step: it stopped
    if ended:
        ranks = ended[0].ranks
        summary = (
            f"step {step}: {_ranks(ranks)} ran {len(reports[ranks[0]].step_records)} steps; "
            f"{_ranks(_other_ranks(groups, ranks))} ran more"
        )
        return Divergence(step, "step_count", None, summary, groups, has_collectives)
    subject_group, subject = _subject(groups)
    if subject is None:  # the same graphs, in another order
        summary = f"step {step}: the ranks ran the same graphs in another order"
        return Divergence(step, "graph_order", None, summary, groups, has_collectives)
    category = _category(subject)
    location = subject.cause_location or subject.site
    return Divergence(
        step,
        category,
        location,
        _summary(step, subject_group, subject, groups, category, location),
        groups,
        has_collectives,
    )


def _placed_by_frames(divergence: Divergence, reports: Mapping[int, RunReport]) -> Divergence:
    """A graph at a sync site the reference never reached (an evaluation only
    rank 0 runs) is placed where the two Python stacks part, seen from the
    outside: the line of the common caller that went another way
    (``main@36 evaluate(...)`` against the reference's ``main@29``)."""
    if divergence.category != "sync_site":
        return divergence
    group, graph = _subject(divergence.groups)
    reference = next(g for g in divergence.groups if g.reference)
    if graph is None or group.reference or not reference.graphs:
        return divergence
    mine = _frames(reports[group.ranks[0]], graph.hash)
    theirs = _frames(reports[reference.ranks[0]], reference.graphs[-1])
    line = parting_line(mine, theirs)
    if line is None or line == divergence.location:
        return divergence
    summary = divergence.summary.replace(_short(divergence.location), _short(line), 1)
    return dataclasses.replace(divergence, location=line, summary=summary)


def _frames(report: RunReport, graph_hash: str) -> tuple[str, ...]:
    graph = next((g for g in report.graphs if g.hash == graph_hash), None)
    return graph.frames if graph else ()


def parting_line(mine: Sequence[str], theirs: Sequence[str]) -> str | None:
    """The first of ``mine`` (frames innermost first, ``fn (file:line)``) that
    differs from ``theirs`` seen from the outermost frame, when it is the user's
    (not in site-packages or the standard library): its ``file:line``."""
    for frame, other in zip(reversed(mine), reversed(theirs), strict=False):
        if frame != other:
            parsed = parse_frame(frame)
            if parsed is None or "/site-packages/" in parsed.file or parsed.file[:1] == "<":
                return None
            return parsed.location
    return None


def _placed_by_ir(divergence: Divergence, ir_nodes: IrNodes) -> Divergence:
    if divergence.category not in _STRUCTURAL:
        return divergence
    group, graph = _subject(divergence.groups)
    reference = next(g for g in divergence.groups if g.reference)
    if graph is None or group.reference or not graph.site or not reference.graphs:
        return divergence
    nodes = ir_nodes(group.ranks[0], graph.hash)
    before = [n for h in reference.graphs for n in ir_nodes(reference.ranks[0], h)]
    line = first_added_line(nodes, before, graph.site)
    if line is None or line == divergence.location:
        return divergence
    summary = divergence.summary.replace(_short(divergence.location), _short(line), 1)
    return dataclasses.replace(divergence, location=line, summary=summary)


def first_added_line(nodes: Sequence[IrNode], reference: Sequence[IrNode], site: str) -> str | None:
    """The first node in the site's file, in graph order, with no counterpart
    (same op, same line) among the reference's nodes: ``/abs/train.py:28``."""
    path = site.rpartition(":")[0]
    name = Path(path).name
    left = Counter((n.op, n.location.line) for n in reference if n.location)
    for node in nodes:
        if node.location is None or node.location.file != name:
            continue
        key = (node.op, node.location.line)
        if left[key] > 0:
            left[key] -= 1
        else:
            return f"{path}:{node.location.line}"
    return None


def _subject(groups: tuple[RankAtStep, ...]) -> tuple[RankAtStep, RankGraph | None]:
    """The graph that tells the story: the first a non-reference group ran that
    the reference did not, else the first the reference ran that others did not."""
    for group in (*groups[1:], groups[0]):
        if group.only_here:
            return group, group.only_here[0]
    return groups[-1], None


def _category(graph: RankGraph) -> str:
    """The recompile cause's category; a graph first compiled at its site is
    ``sync_site`` (a sync the other ranks never reach), a value read's ``host_sync``."""
    if graph.trigger == "host_sync" and graph.cause in (None, "first_compile"):
        return "host_sync"
    if graph.cause == "first_compile":
        return "sync_site"
    return graph.cause or "unknown"


def _summary(
    step: int,
    group: RankAtStep,
    graph: RankGraph,
    groups: tuple[RankAtStep, ...],
    category: str,
    location: str | None,
) -> str:
    others = _other_ranks(groups, group.ranks)
    where = _short(location)
    reference = next(g for g in groups if g.reference)
    extra = group.reference or len(group.graphs) > len(reference.graphs)
    what = "an extra graph" if extra else "a different graph"
    text = (
        f"step {step}: {_ranks(group.ranks)} ran {what} ({graph.hash[:8]}, {category}) "
        f"at {where} that {_ranks(others)} did not"
    )
    if category == "sync_site":
        text += f": it syncs at {_short(graph.site)}, where {_ranks(others)} never did"
    elif graph.cause_detail and category != "host_sync":
        text += f": {graph.cause_detail}"
    changed = _changed_inputs(group.inputs, reference.inputs)
    if changed and not group.reference:
        text += f"; its inputs {changed[0]} where {_ranks(reference.ranks)} had {changed[1]}"
    return text


def _changed_inputs(inputs: tuple[str, ...], reference: tuple[str, ...]) -> tuple[str, str] | None:
    """The inputs that differ from the reference's (``f32[12,8]`` vs ``f32[16,8]``)."""
    if not inputs or not reference or inputs == reference:
        return None
    mine = [i for i in inputs if i not in reference]
    theirs = [i for i in reference if i not in inputs]
    if not mine or not theirs:
        return None
    return ", ".join(_short_input(i) for i in mine), ", ".join(_short_input(i) for i in theirs)


def _short_input(signature: str) -> str:
    """``input /abs/train.py:32 f32[12,8]`` -> ``f32[12,8]`` (at train.py:32)."""
    words = signature.split()
    if len(words) == 3 and words[0] == "input":
        return f"{words[2]} (at {_short(words[1])})"
    return signature


def _other_ranks(groups: tuple[RankAtStep, ...], ranks: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted(r for g in groups for r in g.ranks if r not in ranks))


def _ranks(ranks: tuple[int, ...]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    if ranks == tuple(range(ranks[0], ranks[-1] + 1)) and len(ranks) > 2:
        return f"ranks {ranks[0]}-{ranks[-1]}"
    return "ranks " + ", ".join(str(r) for r in ranks)


def _short(location: str | None) -> str:
    """``/abs/path/train.py:88`` -> ``train.py:88`` (the sentence is stored)."""
    if not location:
        return "an unknown line"
    path, _, line = location.rpartition(":")
    return f"{Path(path).name}:{line}" if path else location
