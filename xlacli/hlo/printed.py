"""The parser's hot loop: runs of instruction lines as XLA prints them, fused.

A GPT-2 training step is 30,000 lines such as ``%n = f32[2]{0} add(%a, %b),
metadata={...}``. Read through the statement reader and the general
instruction reader, each costs twice its reading; here one regex per line
captures name, shape, opcode, operands and attribute text, read straight
from the list of lines. A line is taken only when it is a statement by
itself, as the statement reader would cut it (``leaves_line_alone`` for each
of its parts, the next line no continuation) and it reads without a problem;
anything else stops the run and is left to the general path, which reads it
or reports its error. ``tests/unit/hlo/test_printed_path.py`` holds the two
paths to the same modules, lines and errors.
"""

from __future__ import annotations

import re
from sys import intern

from xlacli.hlo.attributes import AttributeList, MetadataReader, read_attribute_list
from xlacli.hlo.instructions import (
    ComputationState,
    build_instruction,
    read_literal,
    read_parameter_number,
)
from xlacli.hlo.lexer import Malformed
from xlacli.hlo.model import ArrayShape
from xlacli.hlo.shapes import ShapeCache, read_shape
from xlacli.hlo.statements import leaves_line_alone

# A whole printed line: name, array shape and opcode, a plain operand list (no nested parentheses,
# no comment) and the attribute text after it, without the line break.
_PRINTED_INSTRUCTION = re.compile(
    r"\s*(ROOT\s+)?%?([A-Za-z_][\w.\-]*)\s*=\s*"
    r"([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*([a-z][a-z0-9\-]*)\(([^()/]*)\)(.*)"
)

# A line after which a printed instruction line may not be a statement by itself:
# a continuation (``, attr=...``), or a blank or ``#`` line the general path skips.
_NOT_ALONE_AFTER = re.compile(r"\s*(?:,|#|$)")


def _shaped_operand_names(text: str, shapes: ShapeCache, checked: ShapeCache) -> list[str]:
    """The names of an operand list printed with shapes: ``f32[2]{0} %a, f32[] %b``.

    What ``HloModule::ToString()`` prints by default (``print_operand_shape``),
    and so torch_xla's ``_get_xla_tensors_hlo``: a 27,000-line Llama step read
    three times slower on the general path. Each shape is checked and read
    once (``checked``), so a broken one still stops the fast path.

    Raises:
        Malformed: A piece is not ``shape %name``.
    """
    names = []
    for piece in text.split(", "):
        shape_text, _, name = piece.rpartition(" %")
        if shape_text not in checked:
            checked[shape_text] = _checked_shape(shape_text, 0, shape_text, shapes)
        names.append(name)
    return names


def _checked_shape(text: str, start: int, shape_text: str, shapes: ShapeCache) -> ArrayShape:
    """The array shape ``shape_text`` at ``text[start:]``, if it leaves its line alone.

    Raises:
        Malformed: It does not, or it is not one whole array shape.
    """
    if not leaves_line_alone(shape_text):
        raise Malformed(start, "a shape the statement reader leaves alone", shape_text)
    shape, end = read_shape(text, start, shapes)
    if end != start + len(shape_text) or not isinstance(shape, ArrayShape):
        raise Malformed(start, "an operand shape and name", shape_text)
    return shape


class PrintedLineReader:
    """Reads printed instruction lines of one module, with the texts it has checked."""

    def __init__(self, shapes: ShapeCache, read_metadata: MetadataReader):
        self.shapes = shapes  # shared with the general path
        self.read_metadata = read_metadata
        # Only texts checked here (leaves_line_alone) and read: the general path's
        # caches may hold texts it read from statements cut otherwise.
        self.checked_shapes: ShapeCache = {}
        self.tails: dict[str, AttributeList] = {}

    def read(self, state: ComputationState, lines: list[str], index: int, first_line: int) -> int:
        """Read instruction lines as XLA prints them, from ``lines[index]`` on.

        The parser's hot loop, fused: a GPT-2 step is 30,000 such lines, and
        the layers of the general path (statement cutting, ``read``, ``_rest``)
        cost twice the reading itself. A line is taken here only when it is a
        statement by itself (no comment, the next line no continuation) and
        reads without a problem; anything else stops the run, the line is left
        unread, and the general path reads it (and reports its errors).

        Returns:
            The index of the first line not read.
        """
        match_line = _PRINTED_INSTRUCTION.match
        not_alone_after = _NOT_ALONE_AFTER.match
        defined, instructions = state.defined, state.instructions
        checked_shapes, tails = self.checked_shapes, self.tails
        last = len(lines) - 1  # the last line is left to the general path (end of text)
        head = match_line(lines[index]) if index < last else None
        while head is not None:
            # The next line is matched once: as the look-ahead here, then as the line.
            following = match_line(lines[index + 1]) if index + 1 < last else None
            if following is None and not_alone_after(lines[index + 1]):
                break
            name, operand_text, tail_text = head.group(2, 5, 6)
            is_root = head.group(1) is not None
            if name in defined or (is_root and state.root_line):
                break  # the general path reports it
            opcode = intern(head.group(4))
            try:
                operands, parameter_number, literal = self._operands(opcode, operand_text, defined)
                tail = tails.get(tail_text) or self._tail(tail_text)
                shape = checked_shapes.get(head.group(3)) or self._shape(head)
            except Malformed:
                break  # left to the general path, which reads it or says what is wrong
            lineno = first_line + index
            if is_root:
                state.root_line = lineno
            defined[name] = name
            instructions.append(
                build_instruction(name, opcode, shape, operands, tail, is_root, parameter_number,
                             literal, lineno)
            )  # fmt: skip
            index += 1
            head = following
        return index

    def _operands(
        self, opcode: str, text: str, defined: dict[str, str]
    ) -> tuple[tuple[str, ...], int | None, str | None]:
        """A printed line's operands, parameter number and literal.

        Raises:
            Malformed: Anything the fused path leaves to the general one (a
                forward reference, an unusual list, a literal that does not
                leave its line alone).
        """
        if opcode == "parameter":
            return (), read_parameter_number(text, 0, len(text)), None
        if opcode == "constant":
            literal = read_literal(text, 0, len(text))
            if not leaves_line_alone(literal):
                raise Malformed(0, "a literal the statement reader leaves alone", literal)
            return (), None, literal
        if not text:
            return (), None, None
        if text[0] == "%":
            names = text[1:].split(", %")
        elif " %" in text:
            names = _shaped_operand_names(text, self.shapes, self.checked_shapes)
        else:
            names = text.split(", ")
        found = tuple(map(defined.get, names))
        if None in found:
            raise Malformed(0, "operands defined before", text)
        return found, None, None  # type: ignore[return-value]

    def _tail(self, text: str) -> AttributeList:
        """The attribute text of a printed line, read and kept once it is checked.

        No inline bodies here: a body written inline fails, and the general
        path reads it.
        """
        if not leaves_line_alone(text):
            raise Malformed(0, "attributes the statement reader leaves alone", text)
        tail = self.tails[text] = read_attribute_list(text, self.read_metadata)
        return tail

    def _shape(self, head: re.Match[str]) -> ArrayShape:
        """The result shape of a printed line, read and kept once it is checked."""
        text = head.group(3)
        shape = self.checked_shapes[text] = _checked_shape(
            head.string, head.start(3), text, self.shapes
        )
        return shape
