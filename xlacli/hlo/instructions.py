"""Reading instruction statements: the general path, and the pieces both paths share.

Lines as XLA prints them are read by the fused loop of ``xlacli.hlo.printed``;
what it leaves (tuple shapes, nested literals, an omitted shape, an
instruction written inline as an operand, ``%t#1`` for an element of a
tuple, wrapped and commented statements) comes here: one regex for
``[ROOT] %name = f32[..]{..} opcode(`` where it can, a ``find`` for the
closing parenthesis, operands read piece by piece when they are not a plain
list, and the attribute text read once per distinct text. This path also
produces the precise errors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from sys import intern

from xlacli.hlo.attributes import AttributeList, MetadataReader, read_attribute_list
from xlacli.hlo.lexer import Malformed, found_at, read_name, scan_to, skip_space, split_top_level
from xlacli.hlo.model import (
    OMITTED_SHAPE,
    Instruction,
    Shape,
    TupleShape,
    make_instruction,
)
from xlacli.hlo.shapes import ShapeCache, read_shape
from xlacli.hlo.statements import locate

_INSTRUCTION_HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
# The common case in one match: name, an array shape and the opcode.
_ARRAY_INSTRUCTION = re.compile(
    r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*([a-z][a-z0-9\-]*)\("
)
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\s*\(")
_PARAMETER_NUMBER = re.compile(r"\s*(\d+)\s*")
_LITERAL = re.compile(r"[^%\"=]+")
_SHAPE_START = re.compile(r"\(|b\((?=\s*[a-z(])|[a-z][a-z0-9]*\[")
_TUPLE_INDEX = re.compile(r"#(\d+)\s*")
# Reads a called computation written inline: (statement, its line, value, offset, caller).
InlineBodyReader = Callable[[str, int, str, int, str], str]


@dataclass(slots=True)
class Reference:
    """A name used before it can be checked: an operand or a called computation."""

    name: str
    line: int
    column: int
    expected: str


@dataclass(slots=True)
class ComputationState:
    """A computation being read: its instructions so far and names to check at its end."""

    name: str
    instructions: list[Instruction] = field(default_factory=list)
    defined: dict[str, str] = field(default_factory=dict)  # each name to itself, to share it
    pending: list[Reference] = field(default_factory=list)
    root_line: int = 0

    def shape_of(self, name: str, made: list[Instruction]) -> Shape | None:
        """The shape of an instruction defined so far (rare: only the general path asks)."""
        for instruction in reversed((*self.instructions, *made)):
            if instruction.name == name:
                return instruction.shape
        return None


class _Line:
    """One statement being read: what it adds to the computation once it has all been read."""

    __slots__ = ("lineno", "made", "pending", "text")

    def __init__(self, text: str, lineno: int):
        # A plain class: one of these per instruction, so its creation must be cheap.
        self.text = text
        self.lineno = lineno
        self.made: list[Instruction] = []  # inline operands, tuple elements
        self.pending: list[Reference] = []

    def reference(self, name: str, offset: int, expected: str) -> Reference:
        line, column = locate(self.text, self.lineno, offset)
        return Reference(name, line, column, expected)


class InstructionReader:
    """Reads instruction lines of one module, with the caches they share."""

    def __init__(
        self,
        shapes: ShapeCache,
        read_metadata: MetadataReader,
        read_inline: InlineBodyReader | None = None,
    ):
        self.shapes = shapes
        self.read_metadata = read_metadata
        self.read_inline = read_inline
        self.tails: dict[str, AttributeList] = {}

    def read(self, state: ComputationState, line: str, lineno: int) -> None:
        """Read one instruction statement into ``state`` (nothing is added if it fails).

        Raises:
            Malformed: The text is not an instruction (offsets are in ``line``).
        """
        head = _ARRAY_INSTRUCTION.match(line)
        if head:
            shape = (
                self.shapes.get(head.group(3)) or read_shape(line, head.start(3), self.shapes)[0]
            )
            opcode = intern(head.group(4))  # a few dozen opcodes, 30,000 instructions
            start = head.end()
        else:
            head, shape, opcode, start = self._general_head(line)
        name = head.group(2)
        if name in state.defined:
            raise Malformed(head.start(2), "a unique instruction name", repr(name))
        is_root = head.group(1) is not None
        if is_root and state.root_line:
            raise Malformed(head.start(1), f"one ROOT (line {state.root_line} has it)", "ROOT")
        statement = _Line(line, lineno)
        instruction = self._rest(state, statement, name, shape, opcode, start, is_root)
        if is_root:
            state.root_line = lineno
        defined = state.defined
        if statement.made:
            for made in statement.made:
                defined[made.name] = made.name
            state.instructions.extend(statement.made)
        if statement.pending:
            state.pending.extend(statement.pending)
        defined[name] = name
        state.instructions.append(instruction)

    def _rest(
        self,
        state: ComputationState,
        statement: _Line,
        name: str,
        shape: Shape,
        opcode: str,
        start: int,
        is_root: bool,
    ) -> Instruction:
        """Read from after ``opcode(`` to the end of the statement."""
        line = statement.text
        close = line.find(")", start)
        if close < 0 or line.find("(", start, close) >= 0:
            close = scan_to(line, start - 1, stop_at_comma=False) - 1
        operands: tuple[str, ...] = ()
        parameter_number = literal = None
        if opcode == "parameter":
            parameter_number = read_parameter_number(line, start, close)
        elif opcode == "constant":
            literal = read_literal(line, start, close)
        elif start != close:
            operands = self._operands(state, statement, start, close, name)
        tail = self.tails.get(line[close + 1 :]) or self._read_tail(statement, close + 1, name)
        return build_instruction(
            name, opcode, shape, operands, tail, is_root, parameter_number, literal,
            statement.lineno,
        )  # fmt: skip

    def _general_head(self, line: str) -> tuple[re.Match[str], Shape, str, int]:
        """Read ``[ROOT] %name = [shape] opcode(`` when the one-regex path did not match."""
        head = _INSTRUCTION_HEAD.match(line)
        if not head:
            offset = skip_space(line, 0)
            raise Malformed(
                offset,
                "an instruction such as '%x = f32[2]{0} add(%a, %b)' or '}'",
                found_at(line, offset),
            )
        offset = head.end()
        opcode = _OPCODE.match(line, offset)
        if opcode and opcode.group(1) != "b":  # no shape: XLA infers it
            return head, OMITTED_SHAPE, intern(opcode.group(1)), opcode.end()
        shape, offset = read_shape(line, offset, self.shapes)
        opcode = _OPCODE.match(line, offset)
        if not opcode:
            offset = skip_space(line, offset)
            raise Malformed(offset, "an opcode followed by '('", found_at(line, offset))
        return head, shape, intern(opcode.group(1)), opcode.end()

    def _operands(
        self, state: ComputationState, statement: _Line, start: int, close: int, owner: str
    ) -> tuple[str, ...]:
        defined = state.defined
        line = statement.text
        # XLA separates operands with ", %": when every piece split that way is
        # a name already defined, the list is valid. Anything else (forward
        # references, comments, inline shapes, odd spacing) is read, and
        # checked, piece by piece.
        text = line[start:close]
        names = text[1:].split(", %") if text.startswith("%") else text.split(", ")
        shared = tuple(map(defined.get, names))
        if None not in shared:
            return shared  # type: ignore[return-value]
        if not text.strip():
            return ()
        operands = []
        for index, (piece_start, piece_end) in enumerate(split_top_level(line, start, close)):
            operands.append(
                self._operand(state, statement, piece_start, piece_end, f"{owner}.operand{index}")
            )
        return tuple(operands)

    def _operand(
        self, state: ComputationState, statement: _Line, start: int, end: int, inline_name: str
    ) -> str:
        """One operand: ``[shape] name[#i...]``, or an instruction written inline."""
        line = statement.text
        position = skip_space(line, start)
        shape: Shape | None = None
        if _SHAPE_START.match(line, position):
            shape, position = read_shape(line, position, self.shapes)
        name, position = read_name(line, position, "an operand name")
        name_offset = position - len(name)
        position = skip_space(line, position)
        if position < end and line[position] == "(":
            return self._inline_operand(
                state, statement, shape, name, position + 1, end, inline_name
            )
        indices: list[int] = []
        while position < end and line[position] == "#":
            index = _TUPLE_INDEX.match(line, position)
            if not index:
                raise Malformed(
                    position + 1, "a tuple index after '#'", found_at(line, position + 1)
                )
            indices.append(int(index.group(1)))
            position = index.end()
        if position != end:
            raise Malformed(position, "',' or ')'", found_at(line[:end], position))
        operand = state.defined.get(name)
        if operand is None:
            expected = f"an instruction of computation {state.name}"
            statement.pending.append(statement.reference(name, name_offset, expected))
            operand = name
        for depth, element in enumerate(indices):
            last = depth == len(indices) - 1
            operand = self._tuple_element(
                state, statement, operand, element, shape if last else None
            )
        return operand

    def _inline_operand(
        self,
        state: ComputationState,
        statement: _Line,
        shape: Shape | None,
        opcode: str,
        start: int,
        end: int,
        name: str,
    ) -> str:
        # ``reduce(x, f32[] constant(0))``: XLA makes the operand an instruction of its own.
        while name in state.defined or any(made.name == name for made in statement.made):
            name += "_"
        inner = _Line(statement.text[:end], statement.lineno)
        made = self._rest(state, inner, name, shape or OMITTED_SHAPE, intern(opcode), start, False)
        statement.made.extend(inner.made)
        statement.made.append(made)
        statement.pending.extend(inner.pending)
        return name

    def _tuple_element(
        self,
        state: ComputationState,
        statement: _Line,
        operand: str,
        index: int,
        shape: Shape | None,
    ) -> str:
        # ``%t#1`` is XLA's shorthand for get-tuple-element(%t), index=1.
        name = f"{operand}.gte{index}"
        for made in statement.made:
            if made.name == name:
                return name
        if name in state.defined:
            return name
        if shape is None:
            tuple_shape = state.shape_of(operand, statement.made)
            in_range = isinstance(tuple_shape, TupleShape) and index < len(tuple_shape.elements)
            shape = tuple_shape.elements[index] if in_range else OMITTED_SHAPE  # type: ignore[union-attr]
        attributes = read_attribute_list(f", index={index}", self.read_metadata).attributes
        statement.made.append(
            Instruction(
                name,
                "get-tuple-element",
                shape,
                (operand,),
                attributes,
                line=statement.lineno,
            )
        )
        return name

    def _read_tail(self, statement: _Line, offset: int, owner: str) -> AttributeList:
        tail = statement.text[offset:]
        read_inline = None
        if self.read_inline is not None:
            inline = self.read_inline

            def read_inline(value: str, at: int) -> str:
                return inline(statement.text, statement.lineno, value, offset + at, owner)

        try:
            attributes = read_attribute_list(tail, self.read_metadata, read_inline)
        except Malformed as problem:
            raise Malformed(problem.offset + offset, problem.expected, problem.found) from None
        if not attributes.inline:
            self.tails[tail] = attributes
        return attributes


def build_instruction(
    name: str,
    opcode: str,
    shape: Shape,
    operands: tuple[str, ...],
    tail: AttributeList,
    is_root: bool,
    parameter_number: int | None,
    literal: str | None,
    line: int,
) -> Instruction:
    """An instruction from what a line says and its attribute text, read."""
    return make_instruction(
        name, opcode, shape, operands, tail.attributes, tail.metadata, is_root,
        parameter_number, literal, tail.called_computations, line,
    )  # fmt: skip


def read_parameter_number(line: str, start: int, close: int) -> int:
    """The N of ``parameter(N)`` in ``line[start:close]``."""
    match = _PARAMETER_NUMBER.fullmatch(line, start, close)
    if not match:
        raise Malformed(start, "a parameter number", found_at(line[:close], start))
    return int(match.group(1))


def read_literal(line: str, start: int, close: int) -> str:
    """The literal of ``constant(...)`` in ``line[start:close]``, spaces normalized."""
    literal = line[start:close].strip()
    if not literal or not _LITERAL.fullmatch(literal):
        raise Malformed(start, "a constant literal", found_at(line[:close], start))
    return " ".join(literal.split())
