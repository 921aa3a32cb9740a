"""Compile cost by source line: which user lines the compiled graphs come from.

Every HLO instruction before optimization carries its op's whole Python stack
(``hlo.before.pb``); its innermost user frame is the line that made it. IR nodes
(innermost frame only) and optimized instructions (innermost frame in their
metadata) are mapped to the same user lines through the stacks whose innermost
frame they share. A graph's compile time is apportioned by instruction count:
an estimate, since XLA's passes do not cost the same per instruction.

A training graph's backward ops have no stack: the IR scope the child gave each
backward node (``child/backward_sites.py``) names the forward line it
differentiates, and the line's row counts them apart as its backward share
(``_Places`` says where every other op goes).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace

from xlacli.analysis.advice.inputs import AdviceInputs, GraphArtifacts
from xlacli.analysis.profile.op_lines import BACKWARD_SCOPE, BACKWARD_SCOPE_MARK, OPTIMIZER_STEP
from xlacli.parse.frames import CodeRoots, FirstUserFrames, Frame, base_name, first_user_frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.parse.ir_dump import IrNode
from xlacli.report.advice import CompileCost, GraphLineCost, LineCost

# Lines kept per graph; the run's summed lines are all kept up to this many.
LINES_PER_GRAPH = 30
LINES_IN_RUN = 60
# Named buckets: rows that are no line of the user's, saying what they are.
BACKWARD_PASS = "(backward pass: the autograd engine, no loss.backward() line seen)"
LIBRARY_ONLY = "(library code: no line of yours on its stack)"


def compile_cost(inputs: AdviceInputs) -> CompileCost | None:
    """Instructions and estimated compile time per user line, per graph and summed."""
    graphs = [_graph_cost(artifacts, inputs) for artifacts in inputs.graphs if artifacts.stacks]
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
    return frame.location if frame is not None else library_line(frames, roots)


def _graph_cost(artifacts: GraphArtifacts, inputs: AdviceInputs) -> GraphLineCost:
    places = _Places(artifacts, inputs)
    hlo: Counter[_Place] = Counter(places.of(op) for op in artifacts.stacks)
    by_innermost: defaultdict[tuple[str, int], Counter[str | None]] = defaultdict(Counter)
    by_ir_key: defaultdict[tuple[str, str, int], Counter[str | None]] = defaultdict(Counter)
    for op in artifacts.stacks:
        if op.stack:
            line = places.of(op).location
            inner = op.stack[0]
            by_innermost[(inner.file, inner.line)][line] += 1
            # The IR names a file by its base name (70k ops a graph, a few hundred files).
            by_ir_key[(op.ir_op, base_name(inner.file), inner.line)][line] += 1
    ir = Counter(_ir_line(node, by_ir_key) for node in artifacts.ir_nodes)
    optimized = Counter(_optimized_lines(artifacts, by_innermost, inputs.roots))
    total = sum(hlo.values())
    time_s = artifacts.graph.compile_time_s
    counts: dict[str | None, list[int]] = {}
    libraries: dict[str | None, Counter[str | None]] = {}
    for place, count in hlo.items():
        totals = counts.setdefault(place.location, [0, 0])
        totals[0] += count
        totals[1] += count if place.backward else 0
        libraries.setdefault(place.location, Counter())[place.library] += count
    lines = [
        LineCost(
            location=location,
            ir_nodes=ir.get(location, 0),
            hlo_instructions=count,
            optimized_hlo_instructions=optimized.get(location, 0),
            share=count / total,
            compile_time_s=time_s * count / total,
            backward_hlo_instructions=backward,
            library_location=_library_of(libraries[location]),
        )
        for location, (count, backward) in counts.items()
    ]
    return GraphLineCost(artifacts.graph.hash, total, time_s, tuple(_biggest_first(lines)))


@dataclass(frozen=True)
class _Place:
    """Where one instruction belongs: a user line (None: data), and how."""

    location: str | None
    backward: bool = False  # it differentiates the line (the backward pass)
    library: str | None = None  # no user frame on its stack: the library line it came from


_DATA = _Place(None)


class _Places:
    """Each instruction of one graph at the user line that made it.

    In turn: data (parameters, inputs, constants) is no line's work; a backward
    op names the forward line it differentiates in its IR scope
    (``child/backward_sites.py``); else the innermost user frame of its stack; a
    helper computation's instruction (a reduce's body: no metadata) is its
    caller's; an op with only library frames is the graph's site with the library
    line beside (or the optimizer step of xlacli's loop); an op with no frame in a
    training graph was made by the autograd engine outside every node (a gradient
    summed over two uses): the step's ``loss.backward()`` line.
    """

    def __init__(self, artifacts: GraphArtifacts, inputs: AdviceInputs) -> None:
        self._roots = inputs.roots
        self._user_frame = FirstUserFrames(inputs.roots)
        self._by_name = {op.name: op for op in artifacts.stacks if op.name}
        self._cache: dict[str, _Place] = {}
        graph = artifacts.graph
        self._site = graph.site
        self._backward_line = inputs.backward_lines.get(graph.first_step)
        self._trained = self._backward_line is not None or any(
            backward_scope(op.op_name) for op in artifacts.stacks
        )

    def of(self, op: StackedOp) -> _Place:
        if not op.name:
            return self._place(op)
        if op.name not in self._cache:
            self._cache[op.name] = _DATA  # a caller never calls itself; be safe anyway
            self._cache[op.name] = self._place(op)
        return self._cache[op.name]

    def _place(self, op: StackedOp) -> _Place:
        if op.op_type == "xla__device_data":
            return _DATA  # wherever it was moved to the device
        scoped = backward_scope(op.op_name)
        if scoped is not None:
            return _Place(scoped, backward=True)
        frame = self._user_frame(op.stack)
        if frame is not None:
            return _Place(frame.location)
        caller = self._by_name.get(op.caller) if op.caller else None
        if not op.op_type and caller is not None:
            return self.of(caller)
        if op.stack:
            return self._library(op)
        if op.op_type in ("", "prim__Constant") or not self._trained:
            return _DATA
        return _Place(self._backward_line or BACKWARD_PASS, backward=True)

    def _library(self, op: StackedOp) -> _Place:
        library = library_line(op.stack, self._roots)
        backward = any(_in_backward(frame.file) for frame in op.stack)
        in_optimizer = any("/torch/optim/" in frame.file for frame in op.stack)
        if in_optimizer and any(self._roots.is_xlacli(frame) for frame in op.stack):
            return _Place(OPTIMIZER_STEP)  # xlacli's --train loop, no line of the user's
        if library is None:
            return _DATA  # xlacli's own frames only: moving data to the device
        if backward and self._backward_line:
            return _Place(self._backward_line, backward=True, library=library)
        return _Place(self._site or LIBRARY_ONLY, backward=backward, library=library)


def backward_scope(op_name: str) -> str | None:
    """The forward line a backward op differentiates (``file:line``), from the
    IR scope ``child/backward_sites.py`` gave it; None for any other op."""
    if BACKWARD_SCOPE_MARK not in op_name:  # most ops: no search through a long name
        return None
    found = BACKWARD_SCOPE.search(op_name)
    return f"{found['file']}:{found['line']}" if found is not None else None


def library_line(stack: Iterable[Frame], roots: CodeRoots) -> str | None:
    """The innermost frame of a stack that is neither xlacli's nor generated code."""
    frame = next((f for f in stack if not roots.is_xlacli(f) and not f.file.startswith("<")), None)
    return frame.location if frame is not None else None


def _in_backward(file: str) -> bool:
    return file.endswith(("torch/autograd/graph.py", "torch/autograd/__init__.py"))


def _ir_line(
    node: IrNode, by_ir_key: dict[tuple[str, str, int], Counter[str | None]]
) -> str | None:
    if node.is_device_data:
        return None  # data, as its HLO parameter is
    scoped = backward_scope(node.scope + "/")  # the HLO's op_name: scope, then op
    if scoped is not None:
        return scoped
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
            scoped = backward_scope(metadata.op_name)
            if scoped is not None:
                yield scoped
                continue
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
    libraries: dict[str | None, Counter[str | None]] = {}
    for line in lines:
        totals = summed.setdefault(line.location, [0, 0, 0, 0.0, 0])
        totals[0] += line.ir_nodes
        totals[1] += line.hlo_instructions
        totals[2] += line.optimized_hlo_instructions
        totals[3] += line.compile_time_s
        totals[4] += line.backward_hlo_instructions
        libraries.setdefault(line.location, Counter())[line.library_location] += (
            line.hlo_instructions
        )
    return _biggest_first(
        LineCost(
            location,
            int(ir),
            int(hlo),
            int(opt),
            0.0,
            time_s,
            int(backward),
            _library_of(libraries[location]),
        )
        for location, (ir, hlo, opt, time_s, backward) in summed.items()
    )


def _library_of(libraries: Counter[str | None]) -> str | None:
    """The library line a row's ops came through, when none had a frame of the
    user's (one row per location: the line most of them came through)."""
    if None in libraries:
        return None
    return libraries.most_common(1)[0][0] if libraries else None


def _with_share(line: LineCost, total: int) -> LineCost:
    return replace(line, share=line.hlo_instructions / total if total else 0.0)


def _biggest_first(lines: Iterable[LineCost]) -> list[LineCost]:
    return sorted(lines, key=lambda line: (-line.hlo_instructions, line.location or "~"))
