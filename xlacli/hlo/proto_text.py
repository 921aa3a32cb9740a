"""Protobuf text format, read into a generic tree (no schema, no protobuf package).

What ``hlo-translate`` and ``protoc --decode`` read: ``field: value`` and
``field { ... }`` (also ``field: { ... }`` and ``<...>``), ``[a, b]`` lists,
optional ``;`` or ``,`` after a field, ``#`` comments, strings with C escapes
(adjacent strings joined), numbers (decimal, hex, octal, floats with an
optional ``f``), and identifiers for enums, booleans, ``inf`` and ``nan``.
A message is a ``ProtoMessage`` (``xlacli.hlo.proto_tree``): each field
name with its values, in text order. Every defect raises ``HloParseError``
with the line and column where it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import NoReturn

from xlacli.errors import HloParseError
from xlacli.hlo.lexer import found_at
from xlacli.hlo.proto_tree import Identifier, ProtoMessage, Value

# One match per token, the spaces and comments before it included (one match
# per token, not two: tokenizing is most of the reading time).
_TOKEN = re.compile(
    r"""(?:\s+|\#[^\n]*)*+
    (?:(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
    |(?P<number>-?\s*(?:0[xX][0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?)(?![\w.]))
    |(?P<word>-?\s*[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*)
    |(?P<open_string>["'])
    |(?P<punct>[{}<>\[\]:;,/]))
    """,
    re.VERBOSE,
)
_BLANK = re.compile(r"(?:\s+|\#[^\n]*)*+")
_LEADING_ZERO = re.compile(r"-?0\d*[89]\d*")
_INTEGER = re.compile(r"-?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9]\d*)")
_ESCAPE = re.compile(
    r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(.))", re.S
)
_SIMPLE_ESCAPES = {
    "n": 10, "t": 9, "r": 13, "a": 7, "b": 8, "f": 12, "v": 11,
    "\\": 92, "'": 39, '"': 34, "?": 63,
}  # fmt: skip
_CLOSER = {"{": "}", "<": ">"}
_MAX_DEPTH = 100  # protobuf's own limit; deeper would exhaust Python's stack


class _Defect(Exception):
    def __init__(self, offset: int, expected: str, found: str):
        super().__init__(expected)
        self.offset, self.expected, self.found = offset, expected, found


def parse_proto_text(text: str, filename: str = "<string>") -> ProtoMessage:
    """Parse protobuf text format into a message tree.

    Raises:
        HloParseError: The text is not valid protobuf text; the error names
            the line and column of the defect.
    """
    try:
        return _Reader(text).message_body(0, None)
    except _Defect as defect:
        raise defect_error(text, filename, defect.offset, defect.expected, defect.found) from None


def defect_error(text: str, filename: str, offset: int, expected: str, found: str = "") -> NoReturn:
    """Raise ``HloParseError`` at ``offset`` of ``text`` (for readers of the tree, too)."""
    raise HloParseError(filename, *position(text, offset), expected, found)


@dataclass(frozen=True, slots=True)
class ProtoSource:
    """The text a tree was read from: errors found while converting the tree point into it."""

    text: str
    filename: str

    def fail(
        self,
        message: ProtoMessage,
        field: str | None,
        expected: str,
        found: str = "",
        index: int | None = None,
    ) -> NoReturn:
        """Raise ``HloParseError`` at ``field`` of ``message`` (or at the message itself);
        with ``index``, at that value of the repeated field, else at a repeated field's last."""
        offset = message.field_offsets.get(field, message.offset) if field else message.offset
        places = message.value_offsets.get(field, ()) if field else ()
        if index is not None and index < len(places):
            offset = places[index]
        elif index is None and len(places) > 1:  # a singular field given twice: the last counts
            offset = places[-1]
        defect_error(self.text, self.filename, offset, expected, found)

    def integer(self, message: ProtoMessage, field: str) -> int:
        """A whole-number field (0 when absent: protobuf leaves a zero out)."""
        value = message.get(field, 0)
        if not isinstance(value, int):
            self.fail(message, field, f"a whole number for {field}", repr(value))
        return value

    def integers(self, message: ProtoMessage, field: str) -> tuple[int, ...]:
        """A repeated whole-number field (``1.5`` or ``"1"`` in it raised, not skipped)."""
        values = message.all(field)
        for index, value in enumerate(values):
            if not isinstance(value, int):
                self.fail(message, field, f"whole numbers in {field}", repr(value), index)
        return values  # type: ignore[return-value]


def position(text: str, offset: int) -> tuple[int, int]:
    """The 1-based line and column of an offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


class _Reader:
    """Tokens of the text, read by recursive descent."""

    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []  # (kind, text, offset)
        append = self.tokens.append
        end = 0
        # Possessive blanks and a match at each position (not finditer, which would retry
        # from every later character): a run of blanks no token follows is read once.
        match_at = _TOKEN.match
        while (match := match_at(text, end)) is not None:
            end = match.end()
            kind = match.lastgroup
            if kind == "open_string":
                raise _Defect(_line_end(text, end), "a closing quote", "end of line")
            append((kind, match.group(kind), match.start(kind)))  # type: ignore[arg-type]
        end = _BLANK.match(text, end).end()  # type: ignore[union-attr]
        if end < len(text):
            raise _Defect(end, "a field, a value or a bracket", found_at(text, end))
        # The end as a token: reading never runs past it (every reader of it stops or raises).
        append(("end", "", len(text)))
        self.index = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.index]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def message_body(self, offset: int, closer: str | None) -> ProtoMessage:
        # A string token keeps its quotes and a number or word is no bracket: the text of a
        # token alone tells punctuation apart.
        if closer is not None:
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise _Defect(offset, f"messages nested at most {_MAX_DEPTH} deep", "deeper")
        fields: dict[str, list[Value]] = {}
        offsets: dict[str, int] = {}
        places: dict[str, list[int]] = {}  # where each value starts, for errors
        tokens = self.tokens
        while True:
            kind, token, at = tokens[self.index]
            if token == closer:
                self.index += 1
                break
            if kind == "end":
                if closer is not None:
                    line, column = position(self.text, offset)
                    opened = f"the {self.text[offset]!r} of line {line} column {column}"
                    raise _Defect(at, f"{closer!r} to close {opened}", "end of file")
                break
            name = self._field_name()
            values = fields.get(name)
            if values is None:
                fields[name] = values = []
                places[name] = []
                offsets[name] = at
            values.extend(self._field_values(name, places[name]))
            if tokens[self.index][1] in (";", ","):
                self.index += 1
        if closer is not None:
            self.depth -= 1
        return ProtoMessage(
            # An empty list is a field left out (protobuf keeps no trace of it).
            MappingProxyType({name: tuple(values) for name, values in fields.items() if values}),
            offset,
            MappingProxyType(offsets),
            MappingProxyType({name: tuple(at) for name, at in places.items() if at}),
        )

    def _field_name(self) -> str:
        kind, token, at = self.take()
        if kind == "word" and not token.startswith("-"):
            return token
        if token == "[":  # an extension or Any type URL: [type.googleapis.com/x.Y]
            parts: list[str] = []
            while True:
                kind, token, end_at = self.take()
                if token == "]":
                    return "[" + "".join(parts) + "]"
                if kind == "end":
                    raise _Defect(end_at, "']' to close the extension name", "end of file")
                parts.append(token)
        raise _Defect(at, "a field name", repr(token) if token else "end of file")

    def _field_values(self, name: str, places: list[int]) -> list[Value]:
        kind, token, at = self.tokens[self.index]
        has_colon = token == ":"
        if has_colon:
            self.index += 1
            kind, token, at = self.tokens[self.index]
        if token == "[":  # without a colon, a list of messages (checked in _list)
            return self._list(name, places, messages_only=not has_colon)
        places.append(at)
        if token in _CLOSER:
            self.index += 1
            return [self.message_body(at, _CLOSER[token])]
        if not has_colon:
            raise _Defect(at, f"':' or '{{' after {name}", _describe(kind, token))
        return [self._scalar(name)]

    def _list(self, name: str, places: list[int], messages_only: bool = False) -> list[Value]:
        self.index += 1
        values: list[Value] = []
        if self.peek()[1] == "]":
            self.index += 1
            return values
        while True:
            kind, token, at = self.peek()
            places.append(at)
            if token in _CLOSER:
                self.index += 1
                values.append(self.message_body(at, _CLOSER[token]))
            elif messages_only:
                raise _Defect(
                    at, f"':' before the list of {name}, or a message", _describe(kind, token)
                )
            else:
                values.append(self._scalar(name))
            kind, token, at = self.take()
            if token == "]":
                return values
            if token != ",":
                raise _Defect(at, f"',' or ']' in the list of {name}", _describe(kind, token))

    def _scalar(self, name: str) -> Value:
        kind, token, at = self.take()
        if kind == "string":
            pieces = [_unescape(token[1:-1], at + 1)]
            while self.peek()[0] == "string":  # "a" "b" is "ab"
                _, more, more_at = self.take()
                pieces.append(_unescape(more[1:-1], more_at + 1))
            return "".join(pieces)
        if kind == "number":
            return _number(token.replace(" ", ""), at)
        if kind == "word":
            return Identifier("".join(token.split()))
        raise _Defect(at, f"a value for {name}", _describe(kind, token))


def _number(token: str, at: int) -> int | float:
    if token.isdigit() and (token[0] != "0" or len(token) == 1):  # the common case
        return int(token)
    if _LEADING_ZERO.fullmatch(token):  # 08: a leading 0 means octal, as for protobuf
        raise _Defect(at, "octal digits after a leading 0", repr(token))
    if _INTEGER.fullmatch(token):
        negative = token.startswith("-")
        digits = token.lstrip("-")
        if digits[:2] in ("0x", "0X"):
            value = int(digits, 16)
        elif len(digits) > 1 and digits.startswith("0"):
            value = int(digits, 8)
        else:
            value = int(digits)
        return -value if negative else value
    try:
        return float(token.rstrip("fF"))
    except ValueError:
        raise _Defect(at, "a number", repr(token)) from None


def _unescape(raw: str, at: int) -> str:
    if "\\" not in raw:
        return raw
    out = bytearray()
    done = 0
    for match in _ESCAPE.finditer(raw):
        out += raw[done : match.start()].encode()
        octal, hex_byte, short, long, char = match.groups()
        if octal or hex_byte:
            out.append(int(octal, 8) & 0xFF if octal else int(hex_byte, 16))
        elif short or long:
            code = int(short or long, 16)
            if code > 0x10FFFF:
                raise _Defect(
                    at + match.start(),
                    "a Unicode code point up to \\U0010ffff",
                    repr(match.group()),
                )
            out += chr(code).encode("utf-8", "surrogatepass")
        elif char in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[char])
        else:
            raise _Defect(at + match.start(), "a C escape such as \\n or \\303", repr("\\" + char))
        done = match.end()
    out += raw[done:].encode()
    # Bytes fields may hold any bytes: kept exactly (surrogateescape), escaped again on output.
    return out.decode("utf-8", "surrogateescape")


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def _describe(kind: str, token: str) -> str:
    return "end of file" if kind == "end" else repr(token[:30])
