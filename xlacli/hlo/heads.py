"""Reading a computation's head: ``[ENTRY] %name [(p: shape, ...) -> shape] {``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from xlacli.hlo.lexer import Malformed, expect, found_at, read_name, skip_space
from xlacli.hlo.model import Shape
from xlacli.hlo.shapes import ShapeCache, read_shape

_COMPUTATION_HEAD = re.compile(r"\s*(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*")
_SIMPLE_PARAMETER = re.compile(
    r"\s*%?([A-Za-z_][\w.\-]*)\s*:\s*([a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?)\s*([,)])"
)


@dataclass(slots=True)
class Signature:
    """A computation's head, read."""

    name: str
    is_entry: bool
    parameters: tuple[tuple[str, Shape], ...] | None
    result_shape: Shape | None
    name_offset: int
    entry_offset: int


def read_head(line: str, shapes: ShapeCache) -> Signature:
    """Read a computation head statement (it ends with its ``{``).

    Raises:
        Malformed: The text is not a computation head.
    """
    match = _COMPUTATION_HEAD.match(line)
    if not match or line.startswith("ROOT", skip_space(line, 0)):
        raise Malformed(
            skip_space(line, 0), "a computation such as 'ENTRY %main {'", found_at(line, 0)
        )
    offset = match.end()
    parameters: tuple[tuple[str, Shape], ...] | None = None
    result_shape = None
    if line.startswith("(", offset):
        parameters, offset = _read_parameters(line, offset, shapes)
        offset = expect(line, offset, "->")
        result_shape, offset = read_shape(line, offset, shapes)
    offset = expect(line, offset, "{")
    if line[offset:].strip():
        raise Malformed(offset, "the end of the line after '{'", found_at(line, offset))
    return Signature(
        match.group(2),
        bool(match.group(1)),
        parameters,
        result_shape,
        match.start(2),
        match.start(1) if match.group(1) else 0,
    )


def _read_parameters(
    line: str, offset: int, shapes: ShapeCache
) -> tuple[tuple[tuple[str, Shape], ...], int]:
    parameters: list[tuple[str, Shape]] = []
    position = skip_space(line, offset + 1)
    if line.startswith(")", position):
        return (), position + 1
    while True:
        # Fused computations repeat the same few shapes: one match per parameter.
        simple = _SIMPLE_PARAMETER.match(line, position)
        if simple and simple.group(2) in shapes:
            parameters.append((simple.group(1), shapes[simple.group(2)]))
            position = simple.end()
            if simple.group(3) == ")":
                return tuple(parameters), position
            continue
        name, position = read_name(line, position, "a parameter name")
        position = expect(line, position, ":")
        shape, position = read_shape(line, position, shapes)
        parameters.append((name, shape))
        position = skip_space(line, position)
        if line.startswith(")", position):
            return tuple(parameters), position + 1
        if not line.startswith(",", position):
            raise Malformed(position, "',' or ')'", found_at(line, position))
        position += 1
