"""A protobuf message read without its schema: field names with their values, and its text.

``ProtoMessage`` is what ``xlacli.hlo.proto_text`` reads protobuf text format
into; the ``format_*`` functions write a value back as protobuf text on one
line (how fields without an HLO text form are kept as attribute values).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Union

from xlacli.hlo.lexer import quote

# Bytes kept through surrogateescape, and control characters: printed as octal escapes.
_UNPRINTABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\udc80-\udcff]")


class Identifier(str):
    """An unquoted word (an enum value, ``true``, ``inf``), apart from a quoted string."""

    __slots__ = ()


_NO_OFFSETS: Mapping[str, Any] = MappingProxyType({})
Value = Union[str, int, float, Identifier, "ProtoMessage"]
# How protobuf text writes a bool: these are true, "false", "False", "f" and 0 false.
TRUE = ("true", "True", "t", 1)
FALSE = ("false", "False", "f", 0)


@dataclass(frozen=True, slots=True)
class ProtoMessage:
    """One message: its fields in text order, and where it and each field start.

    Attributes:
        fields: Each field name with its values (a repeated field has several).
        offset: Where the message starts in the text (its ``{``, or 0 at the top).
        field_offsets: Where each field name first appears.
        value_offsets: Where each value of each field starts (errors point at the value).
    """

    fields: Mapping[str, tuple[Value, ...]]
    offset: int = 0
    field_offsets: Mapping[str, int] = field(default_factory=lambda: _NO_OFFSETS)
    value_offsets: Mapping[str, tuple[int, ...]] = field(default_factory=lambda: _NO_OFFSETS)

    def get(self, name: str, default: Value | None = None) -> Value | None:
        """The field's last value (proto text keeps the last of a singular field)."""
        values = self.fields.get(name)
        return values[-1] if values else default

    def all(self, name: str) -> tuple[Value, ...]:
        """Every value of a repeated field, in order (empty when absent)."""
        return self.fields.get(name, ())

    def message(self, name: str) -> ProtoMessage | None:
        """The field's message value, or None when absent (or not a message)."""
        value = self.get(name)
        return value if isinstance(value, ProtoMessage) else None

    def messages(self, name: str) -> tuple[ProtoMessage, ...]:
        """The message values of a repeated field."""
        return tuple(value for value in self.all(name) if isinstance(value, ProtoMessage))

    def number(self, name: str, default: int = 0) -> int:
        """The field as a whole number (``default`` when absent or not a number)."""
        value = self.get(name)
        return value if isinstance(value, int) else default

    def numbers(self, name: str) -> tuple[int, ...]:
        """A repeated whole-number field."""
        return tuple(value for value in self.all(name) if isinstance(value, int))

    def flag(self, name: str) -> bool:
        """A bool field: ``true``, ``True``, ``t`` or 1."""
        return self.get(name) in TRUE

    def text(self, name: str) -> str:
        """A string field ("" when absent); an enum is given by its name."""
        value = self.get(name)
        return value if isinstance(value, str) else ""


def format_value(value: Value) -> str:
    """A value as protobuf text (strings quoted, messages in braces, on one line)."""
    if isinstance(value, ProtoMessage):
        return format_message(value)
    if isinstance(value, Identifier):
        return str(value)
    if isinstance(value, str):
        return quote_text(value)
    return repr(value)


def quote_text(value: str) -> str:
    """Quote a string or bytes value; control characters and bytes that are not UTF-8
    print as octal escapes (``\\001``), as protobuf and XLA's CEscape print them."""
    quoted = quote(value)
    if not _UNPRINTABLE.search(quoted):
        return quoted
    return _UNPRINTABLE.sub(lambda m: f"\\{ord(m.group(0)) & 0xFF:03o}", quoted)


def format_message(message: ProtoMessage) -> str:
    """A message as ``{name: value name { ... }}`` on one line."""
    parts = []
    for name, values in message.fields.items():
        for value in values:
            separator = " " if isinstance(value, ProtoMessage) else ": "
            parts.append(f"{name}{separator}{format_value(value)}")
    return "{" + " ".join(parts) + "}"


def format_values(values: tuple[Value, ...]) -> str:
    """A field's values: the value itself, or ``[a, b]`` when repeated."""
    if len(values) == 1:
        return format_value(values[0])
    return "[" + ", ".join(map(format_value, values)) + "]"
