"""Each HLO op of a profile at a line of the user's code, and device time by line.

An optimized HLO op names the user's line in one of three ways, tried in turn:

- its own Python stack (the optimized module's protobuf keeps every op's whole
  stack; the innermost user frame is the line: ``self.ff(x)``, not
  ``torch/nn/modules/linear.py:134``);
- for a backward op, which the autograd engine made on a thread without
  Python frames, the IR scope the child gave it (``xlacli.capture.
  backward_sites``): the user line of the forward op it differentiates;
- for a fusion or a call, the ops inside it (the root's line first, else the
  line most of them share);
- for an op XLA added (a copy, a layout change: no metadata at all), the op
  whose result it reads, through the parameters of the fusion or call that
  holds it (XLA:CPU moves ops into ``parallel_*`` computations it calls);
- for a copy of a graph input the graph also updates in place (a weight the
  optimizer step writes while the step still reads its old value:
  ``input_output_alias``), the op that computes the update: the copy is the
  price of updating in place.

The optimizer step xlacli's ``--train`` loop runs for a model file is no line
of the user's: it is its own row, ``OPTIMIZER_STEP``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from xlacli.hlo.model import HloModule, Instruction
from xlacli.parse.frames import CodeRoots, first_user_frame
from xlacli.parse.hlo_stacks import StackedOp
from xlacli.report.profile import LineTime

# xlacli.child.backward_sites.SCOPE_PREFIX, as the HLO writes it (a repeated
# scope gets a ".N" suffix).
BACKWARD_SCOPE_MARK = "xlacli_backward_of@"
BACKWARD_SCOPE = re.compile(r"xlacli_backward_of@(?P<file>.+?)@(?P<line>\d+)(?:\.\d+)?/")
TOP_LINES = 10
OPTIMIZER_STEP = "optimizer.step() (xlacli --train)"


@dataclass(frozen=True)
class Attribution:
    """The user line an op belongs to, and how it was found."""

    line: str  # file:line
    backward: bool  # the op differentiates the line's forward op
    optimizer: bool = False  # the op is an optimizer's update (torch/optim/ on its stack)


class LineFinder:
    """User lines of the ops of one optimized module."""

    def __init__(self, module: HloModule, stacks: Sequence[StackedOp], roots: CodeRoots):
        self._by_name = {op.name: op for op in stacks if op.name}
        self._computations = {c.name: c for c in module.computations}
        self._instructions = {i.name: i for c in module.computations for i in c.instructions}
        self._roots = roots
        self._cache: dict[str, Attribution | None] = {}
        self._passed_in = _passed_in(module)
        self._updates = _updates_in_place(module)

    def find(self, instruction: Instruction) -> Attribution | None:
        """The op's user line: its stack, its backward scope, else what it calls."""
        if instruction.name in self._cache:
            return self._cache[instruction.name]
        self._cache[instruction.name] = None  # a computation never calls itself
        found = (
            self._own(instruction)
            or self._inside(instruction)
            or self._operands(instruction)
            or self._caller(instruction)
            or self._update(instruction)
        )
        self._cache[instruction.name] = found
        return found

    def _own(self, instruction: Instruction) -> Attribution | None:
        op = self._by_name.get(instruction.name)
        if op is None:
            return None
        frame = first_user_frame(op.stack, self._roots)
        backward = BACKWARD_SCOPE.search(op.op_name)
        if backward is not None:  # the forward line, though the stack is a decomposition's
            return Attribution(f"{backward['file']}:{backward['line']}", backward=True)
        if frame is not None:
            return Attribution(frame.location, backward=False, optimizer=_in_optimizer(op))
        if any(self._roots.is_xlacli(f) for f in op.stack):
            in_optimizer = _in_optimizer(op)
            return Attribution(OPTIMIZER_STEP, False, optimizer=True) if in_optimizer else None
        return None

    def _operands(self, instruction: Instruction) -> Attribution | None:
        """An op XLA added, with no metadata: the line of what it reads."""
        own = self._by_name.get(instruction.name)
        if (own is not None and own.op_type) or instruction.opcode == "parameter":
            return None
        for name in instruction.operands:
            operand = self._instructions.get(name)
            found = self.find(operand) if operand is not None else None
            if found is not None:
                return found
        return None

    def _caller(self, instruction: Instruction) -> Attribution | None:
        """A fusion's or call's parameter: the line of what the caller passed in."""
        source = self._instructions.get(self._passed_in.get(instruction.name, ""))
        return self.find(source) if source is not None else None

    def _update(self, instruction: Instruction) -> Attribution | None:
        """A graph input updated in place: the line of the op computing its update."""
        source = self._instructions.get(self._updates.get(instruction.name, ""))
        return self.find(source) if source is not None else None

    def _inside(self, instruction: Instruction) -> Attribution | None:
        found: list[Attribution] = []
        for name in instruction.called_computations:
            computation = self._computations.get(name)
            if computation is None:
                continue
            root = next((i for i in computation.instructions if i.is_root), None)
            rooted = self.find(root) if root is not None else None
            if rooted is not None:
                return rooted
            # Its own ops' lines, not those of what was passed in (the parameters').
            own_ops = (i for i in computation.instructions if i.opcode != "parameter")
            found.extend(a for i in own_ops if (a := self.find(i)) is not None)
        return Counter(found).most_common(1)[0][0] if found else None


def _passed_in(module: HloModule) -> dict[str, str]:
    """``{parameter name: the caller's operand}`` for the computations a fusion or
    a call runs (a loop's or a conditional's parameters are not its operands)."""
    computations = {c.name: c for c in module.computations}
    passed: dict[str, str] = {}
    for computation in module.computations:
        for caller in computation.instructions:
            if caller.opcode not in ("fusion", "call"):
                continue
            for name in caller.called_computations:
                for parameter in getattr(computations.get(name), "instructions", ()):
                    number = parameter.parameter_number
                    if number is not None and number < len(caller.operands):
                        passed[parameter.name] = caller.operands[number]
    return passed


def _updates_in_place(module: HloModule) -> dict[str, str]:
    """``{entry parameter name: the op whose result overwrites it}`` from the
    module's ``input_output_alias`` (whole parameters, outputs of the root tuple)."""
    try:
        entry = module.entry
    except (LookupError, ValueError):
        return {}
    root = next((i for i in entry.instructions if i.is_root), None)
    if root is None or not module.input_output_alias:
        return {}
    parameters = {
        i.parameter_number: i.name for i in entry.instructions if i.parameter_number is not None
    }
    updates: dict[str, str] = {}
    for alias in module.input_output_alias:
        if alias.parameter_index or len(alias.output_index) != 1:
            continue
        (index,) = alias.output_index
        parameter = parameters.get(alias.parameter_number)
        if parameter is not None and root.opcode == "tuple" and index < len(root.operands):
            updates[parameter] = root.operands[index]
    return updates


def _in_optimizer(op: StackedOp) -> bool:
    return any("/torch/optim/" in frame.file for frame in op.stack)


def lines_by_time(
    ops: Iterable[tuple[float, Attribution | None]], limit: int = TOP_LINES
) -> tuple[tuple[LineTime, ...], float]:
    """The user lines that cost the most device time (forward, backward and
    optimizer together), and the share of the ops' time at a user line."""
    forward: dict[str, float] = {}
    backward: dict[str, float] = {}
    optimizer: dict[str, float] = {}
    total = attributed = 0.0
    for seconds, attribution in ops:
        total += seconds
        if attribution is None:
            continue
        attributed += seconds
        side = backward if attribution.backward else optimizer if attribution.optimizer else forward
        side[attribution.line] = side.get(attribution.line, 0.0) + seconds
    every = {
        line: forward.get(line, 0.0) + backward.get(line, 0.0) + optimizer.get(line, 0.0)
        for line in {*forward, *backward, *optimizer}
    }
    rows = tuple(
        LineTime(
            line, seconds, forward.get(line, 0.0), backward.get(line, 0.0), optimizer.get(line, 0.0)
        )
        for line, seconds in sorted(every.items(), key=lambda item: (-item[1], item[0]))[:limit]
    )
    return rows, attributed / total if total > 0 else 0.0


def finder_for(
    modules: Mapping[str, HloModule],
    stacks_of: Callable[[str], Sequence[StackedOp] | None],
    roots: CodeRoots,
) -> Callable[[str, Instruction], Attribution | None]:
    """``(graph hash, instruction) -> its user line``, one ``LineFinder`` per graph."""
    finders: dict[str, LineFinder] = {}

    def find(graph_hash: str, instruction: Instruction) -> Attribution | None:
        if graph_hash not in finders:
            finders[graph_hash] = LineFinder(
                modules[graph_hash], stacks_of(graph_hash) or (), roots
            )
        return finders[graph_hash].find(instruction)

    return find
