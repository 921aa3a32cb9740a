"""Shapes and literals of an ``HloModuleProto``, as the typed model and as XLA prints them.

``ShapeProto`` becomes ``ArrayShape``/``TupleShape``/``BufferShape``: the
element type by its lowercase name (``F32`` -> ``f32``, ``OPAQUE_TYPE`` ->
``opaque``), dynamic dimensions as ``<=N``, and the layout's
``minor_to_major`` with the details XLA prints after ``:`` (tiles ``T(..)``,
``L(..)``, ``#(..)``, ``*(..)``, ``E(..)``, ``S(..)``, ``SC(..)``, ``P(..)``,
``M(..)``; a field it does not print as ``field=value``). A scalar's empty layout is not printed,
as XLA does not print it. ``LiteralProto`` becomes the literal text of a
``constant(...)``: ``1``, ``true``, ``{1, 2}``, ``{ {1, 2}, {3, 4} }``, for
pred, integer, f16/bf16/f32/f64 and complex element types; None for the
others (the caller then keeps the literal's textproto).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Sequence

from xlacli.hlo.model import ArrayShape, BufferShape, Layout, ProgramShape, Shape, TupleShape
from xlacli.hlo.proto_tree import FALSE, TRUE, Identifier, ProtoMessage, format_values
from xlacli.hlo.shapes import ELEMENT_TYPES

_INTEGRAL = re.compile(r"[su]\d+")
_LAYOUT_PRINTED = frozenset(
    {"minor_to_major", "tiles", "tail_padding_alignment_in_elements", "index_primitive_type",
     "pointer_primitive_type", "element_size_in_bits", "memory_space", "split_configs",
     "physical_shape", "dynamic_shape_metadata_prefix_bytes"}
)  # fmt: skip
# PrimitiveType names that are not the upper-case of XLA's printed name.
_RENAMED_TYPES = {"OPAQUE_TYPE": "opaque"}


class ShapeDefect(Exception):
    """A shape, literal or enum the model cannot hold; ``message`` is where it is."""

    def __init__(self, message: ProtoMessage, expected: str, found: str, field: str | None = None):
        super().__init__(expected)
        self.message, self.expected, self.found, self.field = message, expected, found, field


def enum_name(message: ProtoMessage, field: str, default: str = "", what: str = "") -> str:
    """An enum field's value name (``default`` when absent); ShapeDefect for anything else.

    A number (``type: 3``) is valid protobuf text but read by name only: the numbers of
    every enum are not worth a table, and a number read as a name would be misread.
    """
    raw = message.get(field)
    if raw is None:
        return default
    if not isinstance(raw, str):
        found = "a message" if isinstance(raw, ProtoMessage) else repr(raw)
        raise ShapeDefect(message, what or f"an enum value name for {field}", found, field)
    return raw


def element_type_name(message: ProtoMessage, field: str = "element_type") -> str:
    """``F32`` -> ``f32``; raises ShapeDefect for a name XLA does not know."""
    raw = enum_name(message, field, what="an element type name such as F32")
    name = _RENAMED_TYPES.get(str(raw), str(raw).lower())
    if name not in ELEMENT_TYPES and name not in ("tuple", "buffer"):
        found = repr(raw) if raw else "none"
        raise ShapeDefect(message, "an element type (F32, BF16, PRED, TOKEN...)", found, field)
    return name


def read_shape(message: ProtoMessage | None) -> Shape:
    """A ``ShapeProto`` as a typed shape."""
    if message is None:
        return TupleShape(())
    kind = element_type_name(message)
    if kind == "tuple":
        return TupleShape(tuple(map(read_shape, message.messages("tuple_shapes"))))
    if kind == "buffer":
        element = read_shape(message.message("tuple_shapes") or _missing(message))
        if not isinstance(element, ArrayShape | TupleShape):
            raise ShapeDefect(message, "an array or tuple inside a buffer", "a buffer")
        return BufferShape(element)
    sizes = message.numbers("dimensions")
    dynamic = tuple(flag in TRUE for flag in message.all("is_dynamic_dimension"))
    layout_message = message.message("layout")
    layout = _layout(layout_message, len(sizes)) if layout_message is not None else None
    if layout is not None and not sizes and not layout.extra:
        layout = None  # XLA prints f32[], not f32[]{}
    if len(dynamic) != len(sizes):
        dynamic = (dynamic + (False,) * len(sizes))[: len(sizes)]
    return ArrayShape(kind, sizes, dynamic if any(dynamic) else (), layout)


def _missing(message: ProtoMessage) -> ProtoMessage:
    raise ShapeDefect(message, "the element shape of a buffer in tuple_shapes", "none")


def _layout(message: ProtoMessage, rank: int) -> Layout:
    minor_to_major = message.numbers("minor_to_major")
    if sorted(minor_to_major) != list(range(rank)) and minor_to_major:
        raise ShapeDefect(message, f"a minor_to_major that orders the {rank} dimensions", "")
    # In the order of XLA's Layout::Print (xla/layout.cc), each only when not its default.
    extra = []
    tiles = message.messages("tiles")
    if tiles:
        extra.append("T" + "".join(_tile(tile) for tile in tiles))
    alignment = message.number("tail_padding_alignment_in_elements")
    if alignment not in (0, 1):  # 0 (left out) reads as 1
        extra.append(f"L({alignment})")
    for field, mark in (("index_primitive_type", "#"), ("pointer_primitive_type", "*")):
        kind = enum_name(message, field, "PRIMITIVE_TYPE_INVALID")
        if kind != "PRIMITIVE_TYPE_INVALID":
            name = kind.lower()
            extra.append(f"{mark}({name if _INTEGRAL.fullmatch(name) else 'invalid'})")
    for field, letter in (("element_size_in_bits", "E"), ("memory_space", "S")):
        if value := message.number(field):
            extra.append(f"{letter}({value})")
    splits = message.messages("split_configs")
    if splits:
        extra.append("SC" + "".join(map(_split_config, splits)))
    physical = message.message("physical_shape")
    if physical is not None:
        extra.append(f"P({read_shape(physical)})")
    if (prefix := message.number("dynamic_shape_metadata_prefix_bytes")) > 0:
        extra.append(f"M({prefix})")
    # Fields XLA does not print (dim_level_types...) kept, so that a change to one shows.
    extra.extend(
        f"{field}={format_values(values)}"
        for field, values in message.fields.items()
        if field not in _LAYOUT_PRINTED
    )
    return Layout(minor_to_major or tuple(range(rank - 1, -1, -1)), "".join(extra))


def _split_config(split: ProtoMessage) -> str:
    indices = ",".join(map(str, split.numbers("split_indices")))
    return f"({split.number('dimension')}:{indices})"


def _tile(tile: ProtoMessage) -> str:
    # XLA prints a combined dimension (-2^63) as '*'.
    return (
        "("
        + ",".join("*" if size < -(2**62) else str(size) for size in tile.numbers("dimensions"))
        + ")"
    )


def read_program_shape(message: ProtoMessage) -> ProgramShape:
    """A ``ProgramShapeProto`` (``host_program_shape``) as ``(params)->result``."""
    return ProgramShape(
        tuple(map(read_shape, message.messages("parameters"))),
        read_shape(message.message("result")),
    )


_FLOAT_FIELDS = {"f32": "f32s", "f64": "f64s"}
_SINGLE_DIGITS, _DOUBLE_DIGITS = (6, 9), (15, 17)
_INT_FIELDS = {"s32": "s32s", "s64": "s64s", "u32": "u32s", "u64": "u64s"}
# Element types stored as little-endian bytes: the struct format of one element.
_BYTE_FIELDS = {
    "s8": ("s8s", "b"),
    "u8": ("u8s", "B"),
    "s16": ("s16s", "h"),
    "u16": ("u16s", "H"),
    "f16": ("f16s", "e"),
    "bf16": ("bf16s", "H"),
}


def literal_text(message: ProtoMessage, shape: Shape) -> str | None:
    """The printed literal of a ``LiteralProto``, or None when it is of a kind not read here."""
    if not isinstance(shape, ArrayShape):
        return None
    values = _literal_values(message, shape.element_type)
    if values is None:
        return None
    count = math.prod(shape.dimensions)
    if len(values) != count:
        raise ShapeDefect(message, f"{count} values for {shape}", str(len(values)))
    if not shape.dimensions:
        return values[0]
    if shape.element_type == "pred":
        values = ["1" if value == "true" else "0" for value in values]
    return _nest(values, shape.dimensions)


def _literal_values(message: ProtoMessage, element_type: str) -> list[str] | None:
    if element_type == "pred":  # XLA prints true/false for a scalar, 1/0 in an array
        preds = _scalars(message, "preds", _is_bool, "true or false")
        return ["true" if value in TRUE else "false" for value in preds]
    if element_type in _INT_FIELDS:
        field = _INT_FIELDS[element_type]
        return [str(value) for value in _scalars(message, field, _is_int, "whole numbers")]
    if element_type in _FLOAT_FIELDS:
        digits = _DOUBLE_DIGITS if element_type == "f64" else _SINGLE_DIGITS
        floats = _scalars(message, _FLOAT_FIELDS[element_type], _is_float, "numbers")
        return [_float_text(value, digits) for value in floats]
    if element_type in ("c64", "c128"):
        digits = _DOUBLE_DIGITS if element_type == "c128" else _SINGLE_DIGITS
        field = "c64s" if element_type == "c64" else "c128s"
        parts = [
            _float_text(value, digits) for value in _scalars(message, field, _is_float, "numbers")
        ]
        if len(parts) % 2:
            raise ShapeDefect(
                message, f"real and imaginary pairs in {field}", f"{len(parts)} numbers", field
            )
        return [f"({real}, {imag})" for real, imag in zip(parts[::2], parts[1::2], strict=True)]
    if element_type in _BYTE_FIELDS:
        field, code = _BYTE_FIELDS[element_type]
        data = message.text(field).encode("utf-8", "surrogateescape")
        if len(data) % struct.calcsize(code):
            raise ShapeDefect(
                message, f"whole {element_type} values in {field}", f"{len(data)} bytes"
            )
        values = [item for (item,) in struct.iter_unpack("<" + code, data)]
        if element_type == "bf16":
            values = [struct.unpack("<f", struct.pack("<I", bits << 16))[0] for bits in values]
        show: Callable[[float], str] = _float_text if element_type in ("f16", "bf16") else str
        return [show(value) for value in values]
    return None


def _scalars(
    message: ProtoMessage, field: str, fits: Callable[[object], bool], what: str
) -> tuple[object, ...]:
    values = message.all(field)
    for value in values:
        if not fits(value):
            found = "a message" if isinstance(value, ProtoMessage) else repr(value)
            raise ShapeDefect(message, f"{what} in {field}", found, field)
    return values


def _is_int(value: object) -> bool:
    return isinstance(value, int)


def _is_bool(value: object) -> bool:
    return value in TRUE or value in FALSE


def _is_float(value: object) -> bool:
    if isinstance(value, Identifier):  # inf, -Infinity, nan: protobuf's words for floats
        return value.lower().lstrip("-") in ("inf", "infinity", "nan")
    return isinstance(value, int | float)


def _float_text(value: object, digits: tuple[int, int] = (6, 9)) -> str:
    """A float as XLA prints it (tsl's FloatToBuffer): 6 significant digits if they
    read back as the same float32, else 9 (15 and 17 for a double)."""
    if isinstance(value, str):  # inf, -inf, nan as identifiers
        return value.lower().replace("infinity", "inf")
    number = float(value)  # type: ignore[arg-type]
    if math.isnan(number):
        return "nan"
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if digits == _DOUBLE_DIGITS:
        short = f"{number:.{digits[0]}g}"
        return short if float(short) == number else f"{number:.{digits[1]}g}"
    single = _as_float32(number)
    short = f"{single:.{digits[0]}g}"
    return short if _as_float32(float(short)) == single else f"{single:.{digits[1]}g}"


def _as_float32(number: float) -> float:
    return struct.unpack("<f", struct.pack("<f", number))[0]


def _nest(values: Sequence[str], dimensions: tuple[int, ...]) -> str:
    """Nested braces as XLA prints an array: ``{1, 2}``, ``{ { 1, 2 }, { 3, 4 } }``, and
    from rank 4 on ``{ { {1}, {2} }, ... }`` (its ``/*i0=0*/`` comments are not kept)."""
    if len(dimensions) == 1:
        return "{" + ", ".join(values) + "}"
    if len(dimensions) == 2:
        rows = _chunks(values, dimensions[0])
        return "{ " + ", ".join("{ " + ", ".join(row) + " }" for row in rows) + " }"
    if len(dimensions) == 3:
        blocks = _chunks(values, dimensions[0])
        return "{ " + ", ".join(_nest(block, dimensions[1:]) for block in blocks) + " }"
    return "{ " + _commented(values, dimensions) + " }"


def _commented(values: Sequence[str], dimensions: tuple[int, ...]) -> str:
    if len(dimensions) == 2:
        return ", ".join("{" + ", ".join(row) + "}" for row in _chunks(values, dimensions[0]))
    chunks = _chunks(values, dimensions[0])
    return ", ".join("{ " + _commented(chunk, dimensions[1:]) + " }" for chunk in chunks)


def _chunks(values: Sequence[str], count: int) -> list[Sequence[str]]:
    step = len(values) // count if count else 0
    return [values[i * step : (i + 1) * step] for i in range(count)]
