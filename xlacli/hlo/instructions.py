"""Reading instruction lines: the parser's hot loop.

A GPT-2 training step is 30,000 of these lines, so the common case is one
regex for ``[ROOT] %name = f32[..]{..} opcode(``, a ``find`` for the closing
parenthesis, one regex over a plain operand list and a dict lookup for the
attribute text (which repeats across layers and is read once per distinct
text). Anything unusual (tuple shapes, inline operand shapes, nested
literals) takes the general path, which also produces the precise errors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from sys import intern

from xlacli.hlo.attributes import AttributeList, MetadataReader, read_attribute_list
from xlacli.hlo.lexer import Malformed, found_at, read_name, scan_to, skip_space, split_top_level
from xlacli.hlo.model import Instruction, Shape
from xlacli.hlo.shapes import ShapeCache, read_shape

_INSTRUCTION_HEAD = re.compile(r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*")
# The common case in one match: name, an array shape and the opcode.
_ARRAY_INSTRUCTION = re.compile(
    r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*([a-z][a-z0-9\-]*)\("
)
_OPCODE = re.compile(r"\s*([a-z][a-z0-9\-]*)\s*\(")
_OPERAND = re.compile(r"\s*(?:/\*.*?\*/\s*)?%?([A-Za-z_][\w.\-]*)\s*")
_PARAMETER_NUMBER = re.compile(r"\s*(\d+)\s*")
_LITERAL = re.compile(r"[^%\"=]+")
_INLINE_SHAPE = re.compile(r"\s*(?:/\*.*?\*/\s*)?(?:\(|[a-z][a-z0-9]*\[)")


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


class InstructionReader:
    """Reads instruction lines of one module, with the caches they share."""

    def __init__(self, shapes: ShapeCache, read_metadata: MetadataReader):
        self.shapes = shapes
        self.read_metadata = read_metadata
        self.tails: dict[str, AttributeList] = {}
        self.called: list[Reference] = []  # computation names, checked at the module's end

    def read(self, state: ComputationState, line: str, lineno: int) -> None:
        """Read one instruction line into ``state``.

        Raises:
            Malformed: The line is not an instruction (offsets are in ``line``).
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
        if is_root:
            if state.root_line:
                raise Malformed(head.start(1), f"one ROOT (line {state.root_line} has it)", "ROOT")
            state.root_line = lineno
        close = line.find(")", start)
        if close < 0 or line.find("(", start, close) >= 0:
            close = scan_to(line, start - 1, stop_at_comma=False) - 1
        operands: tuple[str, ...] = ()
        parameter_number = literal = None
        if opcode == "parameter":
            parameter_number = _parameter_number(line, start, close)
        elif opcode == "constant":
            literal = _literal(line, start, close)
        elif start != close:
            operands = self._operands(state, line, start, close, lineno)
        tail = self.tails.get(line[close + 1 :]) or self._read_tail(line, close + 1)
        if tail.called_computations:
            self._note_called(tail, close + 1, lineno)
        state.defined[name] = name
        state.instructions.append(
            Instruction(
                name,
                opcode,
                shape,
                operands,
                tail.attributes,
                tail.metadata,
                is_root,
                parameter_number,
                literal,
                tail.called_computations,
                lineno,
            )
        )

    def _general_head(self, line: str) -> tuple[re.Match[str], Shape, str, int]:
        """Read ``[ROOT] %name = shape opcode(`` when the one-regex path did not match."""
        head = _INSTRUCTION_HEAD.match(line)
        if not head:
            offset = skip_space(line, 0)
            raise Malformed(
                offset,
                "an instruction such as '%x = f32[2]{0} add(%a, %b)' or '}'",
                found_at(line, offset),
            )
        shape, offset = read_shape(line, head.end(), self.shapes)
        opcode = _OPCODE.match(line, offset)
        if not opcode:
            offset = skip_space(line, offset)
            raise Malformed(offset, "an opcode followed by '('", found_at(line, offset))
        return head, shape, intern(opcode.group(1)), opcode.end()

    def _operands(
        self, state: ComputationState, line: str, start: int, close: int, lineno: int
    ) -> tuple[str, ...]:
        defined = state.defined
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
        if "[" in line[start:close] and _INLINE_SHAPE.match(line, start):
            spans = self._operand_spans_with_shapes(line, start, close)
        else:
            spans = _operand_spans(line, start, close)
        operands = []
        for name, offset in spans:
            operand = defined.get(name)
            if operand is None:
                state.pending.append(
                    Reference(
                        name, lineno, offset + 1, f"an instruction of computation {state.name}"
                    )
                )
                operand = name
            operands.append(operand)
        return tuple(operands)

    def _operand_spans_with_shapes(
        self, line: str, start: int, close: int
    ) -> list[tuple[str, int]]:
        # Older XLA prints each operand's shape before its name: add(f32[2]{0} %a, ...).
        spans = []
        for piece_start, piece_end in split_top_level(line, start, close):
            _, position = read_shape(line, piece_start, self.shapes)
            name_offset = skip_space(line, position)
            name, position = read_name(line, position, "an operand name")
            if skip_space(line, position) != piece_end:
                raise Malformed(position, "',' or ')'", found_at(line, position))
            spans.append((name, name_offset))
        return spans

    def _read_tail(self, line: str, offset: int) -> AttributeList:
        tail = line[offset:]
        try:
            attributes = read_attribute_list(tail, self.read_metadata)
        except Malformed as problem:
            raise Malformed(problem.offset + offset, problem.expected, problem.found) from None
        self.tails[tail] = attributes
        return attributes

    def _note_called(self, tail: AttributeList, offset: int, lineno: int) -> None:
        for name, column in zip(tail.called_computations, tail.called_offsets, strict=True):
            self.called.append(Reference(name, lineno, offset + column + 1, "a computation"))


def _operand_spans(line: str, start: int, close: int) -> list[tuple[str, int]]:
    spans = []
    position = start
    for piece in line[start:close].split(","):
        match = _OPERAND.fullmatch(piece)
        if not match:
            raise Malformed(
                position + len(piece) - len(piece.lstrip()), "an operand name", found_at(piece, 0)
            )
        spans.append((match.group(1), position + match.start(1)))
        position += len(piece) + 1
    return spans


def _parameter_number(line: str, start: int, close: int) -> int:
    match = _PARAMETER_NUMBER.fullmatch(line, start, close)
    if not match:
        raise Malformed(start, "a parameter number", found_at(line[:close], start))
    return int(match.group(1))


def _literal(line: str, start: int, close: int) -> str:
    literal = line[start:close].strip()
    if not literal or not _LITERAL.fullmatch(literal):
        raise Malformed(start, "a constant literal", found_at(line[:close], start))
    return " ".join(literal.split())
