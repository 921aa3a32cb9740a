"""Reading ``key=value`` attribute lists, ``metadata={...}`` and called computations.

Values are kept as printed (``dimensions={1,0}``, ``backend_config={...json...}``,
``sharding={devices=[2,1]0,1}``): the scanner only needs their extent, which
brackets and strings decide, and keeping the text keeps the printer exact.
``metadata`` is parsed into ``Metadata``; the attributes that name
computations are parsed into names so that the module's call graph is typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType

from xlacli.hlo.lexer import NAME, Malformed, found_at, scan_to, unescape
from xlacli.hlo.model import (
    EMPTY_ATTRIBUTES,
    EMPTY_METADATA,
    Attributes,
    Metadata,
    StackFrameIndex,
)

# Attributes whose values name computations, in the order XLA prints them.
CALLED_COMPUTATION_KEYS = (
    "calls",
    "to_apply",
    "condition",
    "body",
    "select",
    "scatter",
    "true_computation",
    "false_computation",
    "branch_computations",
    "called_computations",
    "async_wrapped_computation",
)
_ATTRIBUTE_START = re.compile(r"\s*,\s*([A-Za-z_][\w.\-]*)\s*=\s*")
# A value made of plain text, strings and brace groups that hold no braces
# (``kind=kLoop``, ``dimensions={1,0}``, ``metadata={op_name="a{b}" ...}``):
# one match finds where it ends; anything nested goes through the scanner.
_FLAT_VALUE = re.compile(
    r'(?:[^,{}\[\]()"]++|"(?:[^"\\]|\\.)*+"|\{(?:[^{}"]|"(?:[^"\\]|\\.)*+")*+\})++'
)
# Fields are separated by spaces as XLA prints them, or by commas as people write them.
_METADATA_FIELD = re.compile(
    r'\s*,?\s*([A-Za-z_]\w*)\s*=\s*("(?:[^"\\]|\\.)*"|\{[^{}]*\}|[^\s{}",]+)'
)
_NAME_LIST = re.compile(r"\{\s*(.*?)\s*\}")


@dataclass(frozen=True, slots=True)
class AttributeList:
    """What follows an instruction's operands, read once per distinct text."""

    attributes: Attributes
    metadata: Metadata
    called_computations: tuple[str, ...]
    inline: bool = False  # a computation body was written inline: not to be reused


EMPTY_ATTRIBUTE_LIST = AttributeList(EMPTY_ATTRIBUTES, EMPTY_METADATA, ())


def read_attributes(text: str, offset: int = 0) -> dict[str, tuple[str, int]]:
    """Read ``, key=value, key=value`` from ``offset`` to the end of ``text``.

    Returns:
        Each key with its value (as printed, stripped) and the value's offset.

    Raises:
        Malformed: Anything but a comma-separated ``key=value`` list, an empty
            value, a repeated key, or unbalanced brackets in a value.
    """
    attributes: dict[str, tuple[str, int]] = {}
    end = len(text)
    while offset < end:
        match = _ATTRIBUTE_START.match(text, offset)
        if not match:
            if not text[offset:].strip():
                break
            raise Malformed(
                offset, "',' and an attribute such as key=value", found_at(text, offset)
            )
        key = match.group(1)
        value_start = match.end()
        flat = _FLAT_VALUE.match(text, value_start)
        value_end = flat.end() if flat else value_start
        if value_end < end and text[value_end] != ",":
            value_end = scan_to(text, value_start, stop_at_comma=True)
        if value_end < end and text[value_end] != ",":
            raise Malformed(value_end, "',' or the end of the line", repr(text[value_end]))
        value = text[value_start:value_end].strip()
        if not value:
            raise Malformed(value_start, f"a value for {key}", found_at(text, value_start))
        if key in attributes:
            raise Malformed(match.start(1), "each attribute once", f"a second {key}")
        attributes[key] = (value, value_start)
        offset = value_end
    return attributes


MetadataReader = Callable[[str, int], Metadata]
# Reads an inline computation body ``{ ... }`` at an offset; returns the name given to it.
InlineReader = Callable[[str, int], str]


def read_attribute_list(
    tail: str, read_metadata: MetadataReader, read_inline: InlineReader | None = None
) -> AttributeList:
    """Read the attribute list of an instruction (the text after its operands).

    A called computation written inline (``to_apply={ p = f32[] parameter(0) ... }``,
    as in async ``call-start``) is handed to ``read_inline``, and the attribute
    then names the computation it made, the way XLA prints it back.
    """
    if not tail or tail.isspace():
        return EMPTY_ATTRIBUTE_LIST
    raw = read_attributes(tail)
    metadata = EMPTY_METADATA
    if "metadata" in raw:
        metadata = read_metadata(*raw.pop("metadata"))
    called: list[str] = []
    inline = False
    for key in CALLED_COMPUTATION_KEYS:
        if key not in raw:
            continue
        value, offset = raw[key]
        if read_inline is not None and value.startswith("{") and "=" in value:
            name = read_inline(value, offset)
            raw[key] = (f"%{name}", offset)
            called.append(name)
            inline = True
        else:
            # Its offsets still place the errors of a malformed name list.
            called.extend(name for name, _ in read_computation_names(value, offset))
    attributes = MappingProxyType({key: value for key, (value, _) in raw.items()})
    return AttributeList(attributes, metadata, tuple(called), inline)


def read_computation_names(value: str, offset: int) -> list[tuple[str, int]]:
    """Read ``%name`` or ``{%a, %b}``; return each name with its offset."""
    listed = _NAME_LIST.fullmatch(value)
    if not listed:
        return [_whole_name(value, offset)]
    names = []
    inner_offset = offset + listed.start(1)
    if not listed.group(1):
        return []
    for piece in listed.group(1).split(","):
        names.append(_whole_name(piece.strip(), inner_offset + len(piece) - len(piece.lstrip())))
        inner_offset += len(piece) + 1
    return names


def _whole_name(text: str, offset: int) -> tuple[str, int]:
    match = NAME.fullmatch(text)
    if not match:
        raise Malformed(offset, "a computation name", repr(text[:30]))
    return match.group(1), offset


def read_brace_fields(text: str, offset: int) -> dict[str, str]:
    """Read a ``{key=value key="value" ...}`` body (metadata, preamble entries).

    Returns:
        Each field's value as printed (strings keep their quotes).
    """
    if not (text.startswith("{") and text.endswith("}")):
        raise Malformed(offset, "'{' and key=value fields", found_at(text, 0))
    fields: dict[str, str] = {}
    position = 1
    end = len(text) - 1
    while True:
        match = _METADATA_FIELD.match(text, position, end)
        if not match:
            if text[position:end].strip():
                raise Malformed(
                    offset + position, "a field such as key=value", found_at(text[:end], position)
                )
            return fields
        fields[match.group(1)] = match.group(2)
        position = match.end()


def build_metadata(
    fields: dict[str, str], offset: int, locate: Callable[[int], tuple[str, int] | None]
) -> Metadata:
    """Type a metadata field map; resolve ``stack_frame_id`` through ``locate``.

    Fields other than the five known ones are kept as printed in ``extra``.
    """
    known = ("op_type", "op_name", "source_file", "source_line", "stack_frame_id")
    source_line = _whole_number(fields, "source_line", offset)
    frame_id = _whole_number(fields, "stack_frame_id", offset)
    source_file = _string_field(fields, "source_file")
    resolved = False
    if frame_id and not source_file:
        location = locate(frame_id)
        if location is not None:
            source_file, source_line = location
            resolved = True
    extra = tuple((key, value) for key, value in fields.items() if key not in known)
    return Metadata(
        op_type=_string_field(fields, "op_type"),
        op_name=_string_field(fields, "op_name"),
        source_file=source_file,
        source_line=source_line,
        stack_frame_id=frame_id,
        resolved=resolved,
        extra=extra,
    )


def frame_locator(index: StackFrameIndex | None) -> Callable[[int], tuple[str, int] | None]:
    """What ``build_metadata`` resolves a ``stack_frame_id`` with: ``(file, line)`` or None."""
    if index is None:
        return lambda _: None

    def locate(frame_id: int) -> tuple[str, int] | None:
        location = index.location(frame_id)
        return (location[0], location[1]) if location else None

    return locate


def _string_field(fields: dict[str, str], key: str) -> str:
    value = fields.get(key, "")
    return unescape(value[1:-1]) if value.startswith('"') else value


def _whole_number(fields: dict[str, str], key: str, offset: int) -> int:
    value = fields.get(key, "0")
    if not value.isdigit():
        raise Malformed(offset, f"a whole number for {key}", repr(value))
    return int(value)
