"""Compile cost by source line: which user lines the compiled graphs come from.

Every HLO instruction before optimization carries its op's whole Python stack
(``hlo.before.pb``); its innermost user frame is the line that made it. IR nodes
(innermost frame only) and optimized instructions (innermost frame in their
metadata) are mapped to the same user lines through the stacks whose innermost
frame they share. A graph's compile time is apportioned by instruction count:
an estimate, since XLA's passes do not cost the same per instruction.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from xlacli.analysis.advice_inputs import AdviceInputs, GraphArtifacts
from xlacli.parse.frames import CodeRoots, Frame, first_user_frame
from xlacli.parse.ir_dump import IrNode
from xlacli.report.advice import CompileCost, GraphLineCost, LineCost

# Lines kept per graph; the run's summed lines are all kept up to this many.
LINES_PER_GRAPH = 30
LINES_IN_RUN = 60


def compile_cost(inputs: AdviceInputs) -> CompileCost | None:
    """Instructions and estimated compile time per user line, per graph and summed."""
    graphs = [
        _graph_cost(artifacts, inputs.roots) for artifacts in inputs.graphs if artifacts.stacks
    ]
    if not graphs:
        return None
    total = sum(graph.hlo_instructions for graph in graphs)
    summed = _sum_lines(line for graph in graphs for line in graph.lines)
    return CompileCost(
        hlo_instructions=total,
        compile_time_s=sum(graph.compile_time_s for graph in graphs),
        lines=tuple(_with_share(line, total) for line in summed[:LINES_IN_RUN]),
        graphs=tuple(
            GraphLineCost(
                graph.graph_hash,
                graph.hlo_instructions,
                graph.compile_time_s,
                graph.lines[:LINES_PER_GRAPH],
            )
            for graph in graphs
        ),
    )


def user_line(stack: Iterable[Frame], roots: CodeRoots) -> str | None:
    """The innermost user frame of a stack as ``file:line``; else, for a model
    made only of library modules, the library line that made the op."""
    frames = tuple(stack)
    frame = first_user_frame(frames, roots)
    if frame is None:
        frame = next(
            (f for f in frames if not roots.is_xlacli(f) and not f.file.startswith("<")), None
        )
    return f"{frame.file}:{frame.line}" if frame is not None else None


def _graph_cost(artifacts: GraphArtifacts, roots: CodeRoots) -> GraphLineCost:
    hlo: Counter[str | None] = Counter()
    by_innermost: dict[tuple[str, int], Counter[str | None]] = {}
    by_ir_key: dict[tuple[str, str, int], Counter[str | None]] = {}
    for op in artifacts.stacks:
        # Data (parameters, inputs) is no line's work, wherever it was moved to the device.
        line = None if op.op_type == "xla__device_data" else user_line(op.stack, roots)
        hlo[line] += 1
        if op.stack:
            inner = op.stack[0]
            by_innermost.setdefault((inner.file, inner.line), Counter())[line] += 1
            key = (op.ir_op, Path(inner.file).name, inner.line)
            by_ir_key.setdefault(key, Counter())[line] += 1
    ir = Counter(_ir_line(node, by_ir_key) for node in artifacts.ir_nodes)
    optimized = Counter(_optimized_lines(artifacts, by_innermost, roots))
    total = sum(hlo.values())
    time_s = artifacts.graph.compile_time_s
    lines = [
        LineCost(
            location=line,
            ir_nodes=ir.get(line, 0),
            hlo_instructions=count,
            optimized_hlo_instructions=optimized.get(line, 0),
            share=count / total,
            compile_time_s=time_s * count / total,
        )
        for line, count in hlo.items()
    ]
    return GraphLineCost(artifacts.graph.hash, total, time_s, tuple(_biggest_first(lines)))


def _ir_line(
    node: IrNode, by_ir_key: dict[tuple[str, str, int], Counter[str | None]]
) -> str | None:
    if node.location is None:
        return None
    found = by_ir_key.get((node.op, node.location.file, node.location.line))
    return found.most_common(1)[0][0] if found else None


def _optimized_lines(
    artifacts: GraphArtifacts,
    by_innermost: dict[tuple[str, int], Counter[str | None]],
    roots: CodeRoots,
) -> Iterable[str | None]:
    module = artifacts.optimized
    for computation in module.computations if module is not None else ():
        for instruction in computation.instructions:
            metadata = instruction.metadata
            if not metadata.source_file:
                yield None
                continue
            found = by_innermost.get((metadata.source_file, metadata.source_line))
            if found:
                yield found.most_common(1)[0][0]
            else:
                yield user_line((Frame("", metadata.source_file, metadata.source_line),), roots)


def _sum_lines(lines: Iterable[LineCost]) -> list[LineCost]:
    summed: dict[str | None, list[float]] = {}
    for line in lines:
        totals = summed.setdefault(line.location, [0, 0, 0, 0.0])
        totals[0] += line.ir_nodes
        totals[1] += line.hlo_instructions
        totals[2] += line.optimized_hlo_instructions
        totals[3] += line.compile_time_s
    return _biggest_first(
        LineCost(location, int(ir), int(hlo), int(opt), 0.0, time_s)
        for location, (ir, hlo, opt, time_s) in summed.items()
    )


def _with_share(line: LineCost, total: int) -> LineCost:
    return replace(line, share=line.hlo_instructions / total if total else 0.0)


def _biggest_first(lines: Iterable[LineCost]) -> list[LineCost]:
    return sorted(lines, key=lambda line: (-line.hlo_instructions, line.location or "~"))
