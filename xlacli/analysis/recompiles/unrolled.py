"""Loops that unroll into one graph: a loop over data with no sync inside.

A loop that never syncs (an evaluation that accumulates on the device and reads
once at the end, a decode that keeps appending) does not run a graph per
iteration: torch_xla traces every iteration into the next graph, so that graph
holds the loop's body once per iteration, and grows with the trip count (3,000
rows, one graph of thousands of instructions, compiled again for another count).
No compile says so: the verdict read "no recompile". Found from the graph's IR:
a source line whose ops repeat many times (the same ops, once per iteration),
inside a ``for``/``while`` of the user's code that is not a module's
``forward`` (a stack of layers iterated in ``forward`` is the scan advisor's,
never a loop over data).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xlacli.analysis.recompiles.loop_source import enclosing_loop
from xlacli.parse.frames import Frame
from xlacli.parse.ir_dump import IrNode
from xlacli.paths import split_location
from xlacli.report.run_report import UnrolledLoop

# The same ops at one line this many times in one graph: a loop's iterations.
MIN_ITERATIONS = 8


@dataclass(frozen=True)
class GraphNodes:
    """One graph's IR nodes and its size, as the processor hands them over."""

    graph_hash: str
    nodes: tuple[IrNode, ...]
    hlo_instructions: int | None
    site: str | None = None  # the user's line whose sync or read ran the graph


def unrolled_loops(
    graphs: Iterable[GraphNodes],
    user_line: Callable[[IrNode, str], str | None],
    read_lines: Callable[[str], list[str] | None],
) -> tuple[UnrolledLoop, ...]:
    """Each graph's loops unrolled into it (``user_line``: the user's ``file:line``
    behind a node of a graph; ``read_lines``: a file's lines)."""
    found: list[UnrolledLoop] = []
    for graph in graphs:
        # Counted by the IR's own location first (one pass), resolved to the user's
        # line only where a location repeats: linear in the graph's size.
        per_location: dict[Frame, Counter[tuple[str, str]]] = {}
        first: dict[Frame, IrNode] = {}
        for node in graph.nodes:
            if node.location is None or node.op == "xla::device_data":
                continue
            per_location.setdefault(node.location, Counter())[(node.op, node.shape)] += 1
            first.setdefault(node.location, node)
        per_line: dict[str, int] = {}
        for location, ops in per_location.items():
            iterations = min(ops.values())  # every op of the body, once per iteration
            if iterations < MIN_ITERATIONS:
                continue
            line = user_line(first[location], graph.graph_hash)
            if line is not None:
                per_line[line] = max(per_line.get(line, 0), iterations)
        loops: dict[str, UnrolledLoop] = {}
        # A loop that holds the graph's own sync runs one graph per iteration: its
        # repeats are something else (an optimizer's per-parameter update).
        synced_in = loop_above(graph.site, read_lines) if graph.site else None
        for line, iterations in per_line.items():
            header = loop_above(line, read_lines)
            if header is None or header == synced_in:
                continue
            if header in loops and loops[header].iterations >= iterations:
                continue
            loops[header] = UnrolledLoop(
                graph_hash=graph.graph_hash,
                loop=header,
                body=line,
                iterations=iterations,
                hlo_instructions=graph.hlo_instructions,
            )
        found.extend(loops.values())
    return tuple(found)


def loop_above(location: str, read_lines: Callable[[str], list[str] | None]) -> str | None:
    """The ``for``/``while`` enclosing ``file:line`` in the user's code, as
    ``file:line``; None outside every loop, or inside a module's ``forward``."""
    file, number = split_location(location)
    if number is None:
        return None

    def read_source(path: str) -> str | None:
        lines = read_lines(path)
        return None if lines is None else "\n".join(lines) + "\n"

    loop = enclosing_loop(read_source, file, number)
    return f"{file}:{loop}" if loop is not None else None
