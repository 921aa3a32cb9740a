"""Reading shapes: ``f32[2,3]{1,0}``, ``bf16[<=8,128]{1,0:T(8,128)(2,1)}``, tuples, ``token[]``.

Shapes repeat across a module (a GPT-2 step has tens of thousands of
instructions and a few hundred distinct shapes), so array shapes are read
through a cache keyed by their text: one regex match and a dict lookup per
instruction, and one shared object per distinct shape.
"""

from __future__ import annotations

import re

from xlacli.hlo.lexer import Malformed, expect, found_at, skip_space
from xlacli.hlo.model import ArrayShape, BufferShape, Layout, ProgramShape, Shape, TupleShape

_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](\{[^{}]*\})?")
# Every PrimitiveType of xla_data.proto as primitive_util prints it (TUPLE
# and BUFFER have their own syntax: parentheses and ``b(...)``).
ELEMENT_TYPES = frozenset(
    [
        "pred",
        "s1",
        "s2",
        "s4",
        "s8",
        "s16",
        "s32",
        "s64",
        "u1",
        "u2",
        "u4",
        "u8",
        "u16",
        "u32",
        "u64",
        "f16",
        "f32",
        "bf16",
        "f64",
        "f8e5m2",
        "f8e4m3",
        "f8e4m3fn",
        "f8e4m3b11fnuz",
        "f8e3m4",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "f4e2m1fn",
        "f8e8m0fnu",
        "c64",
        "c128",
        "token",
        "opaque",
    ]
)
_DIMENSION = re.compile(r"\s*(?:(\d+)|<=\s*(\d+)|(\?))\s*")
_MINOR_TO_MAJOR = re.compile(r"\s*(?:\d+\s*(?:,\s*\d+\s*)*)?")

ShapeCache = dict[str, ArrayShape]


def read_shape(text: str, offset: int, cache: ShapeCache) -> tuple[Shape, int]:
    """Read the shape at ``offset`` (after optional spaces); return it and its end.

    Raises:
        Malformed: The text there is not a shape.
    """
    offset = skip_space(text, offset)
    if text.startswith("(", offset):
        return _read_tuple(text, offset, cache)
    if text.startswith("b(", offset):
        return _read_buffer(text, offset, cache)
    match = _ARRAY.match(text, offset)
    if not match:
        raise Malformed(offset, "a shape such as f32[2,3]{1,0}", found_at(text, offset))
    shape = cache.get(match.group(0))
    if shape is None:
        shape = _build_array(match)
        cache[match.group(0)] = shape
    return shape, match.end()


def _read_tuple(text: str, offset: int, cache: ShapeCache) -> tuple[TupleShape, int]:
    elements: list[Shape] = []
    offset = skip_space(text, offset + 1)
    if text.startswith(")", offset):
        return TupleShape(()), offset + 1
    while True:
        element, offset = read_shape(text, offset, cache)
        elements.append(element)
        offset = skip_space(text, offset)
        if text.startswith(")", offset):
            return TupleShape(tuple(elements)), offset + 1
        offset = expect(text, offset, ",")


def _read_buffer(text: str, offset: int, cache: ShapeCache) -> tuple[BufferShape, int]:
    element, end = read_shape(text, offset + 2, cache)
    if not isinstance(element, ArrayShape | TupleShape):
        raise Malformed(offset + 2, "an array or tuple shape inside b(...)", found_at(text, offset))
    return BufferShape(element), expect(text, end, ")")


def _build_array(match: re.Match[str]) -> ArrayShape:
    element_type, dims_text, layout_text = match.group(1, 2, 3)
    if element_type not in ELEMENT_TYPES:
        raise Malformed(
            match.start(1), "an element type (f32, bf16, s32, pred...)", repr(element_type)
        )
    sizes: list[int] = []
    dynamic: list[bool] = []
    if dims_text.strip():
        position = match.start(2)
        for piece in dims_text.split(","):
            dim = _DIMENSION.fullmatch(piece)
            if not dim:
                raise Malformed(position, "a dimension size (N, <=N or ?)", repr(piece.strip()))
            exact, bound, unbounded = dim.groups()
            sizes.append(int(exact or bound or -1) if not unbounded else -1)
            dynamic.append(exact is None)
            position += len(piece) + 1
    layout = _build_layout(layout_text, len(sizes), match.start(3)) if layout_text else None
    return ArrayShape(element_type, tuple(sizes), tuple(dynamic) if any(dynamic) else (), layout)


def _build_layout(text: str, rank: int, offset: int) -> Layout:
    body = text[1:-1]
    dims_text, colon, extra = body.partition(":")
    if not _MINOR_TO_MAJOR.fullmatch(dims_text):
        raise Malformed(offset, "a layout such as {1,0}", repr(text))
    minor_to_major = tuple(int(dim) for dim in dims_text.split(",")) if dims_text.strip() else ()
    if len(minor_to_major) != rank or sorted(minor_to_major) != list(range(rank)):
        raise Malformed(offset, f"a layout that orders the {rank} dimensions", repr(text))
    if colon and not extra.strip():
        raise Malformed(offset + len(text) - 1, "layout details after ':'", "'}'")
    return Layout(minor_to_major, extra.strip())


def read_program_shape(text: str, offset: int, cache: ShapeCache) -> tuple[ProgramShape, int]:
    """Read ``(shape, shape, ...)->shape`` (an ``entry_computation_layout`` body)."""
    parameters, offset = read_shape(text, offset, cache)
    if not isinstance(parameters, TupleShape):
        raise Malformed(offset, "'(' and the parameter shapes", found_at(text, offset))
    offset = expect(text, offset, "->")
    result, offset = read_shape(text, offset, cache)
    return ProgramShape(parameters.elements, result), offset
