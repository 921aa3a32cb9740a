"""Low-level scanning of one line of HLO text: names, strings, brackets, comments.

The parser is line-oriented (XLA prints one instruction per line); these
helpers work on a line and an offset, and report problems by raising
``Malformed`` with the offset. The parser turns that into an
``HloParseError`` naming the file, line and column, so nothing here needs to
know where the line came from.
"""

from __future__ import annotations

import re

NAME = re.compile(r"%?([A-Za-z_][\w.\-]*)")
SPACE_AND_COMMENTS = re.compile(r"(?:\s+|/\*.*?\*/)*")
# A quoted string with C escapes; a lone quote means the string never ends.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*+"')
# What changes nesting depth, or ends a value, while scanning: strings are
# skipped whole so that a brace or comma inside one does not count.
_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*+"|"|[{}\[\]()]|,|/\*.*?\*/')
_CLOSER = {"{": "}", "[": "]", "(": ")"}
_ESCAPE = re.compile(r"\\(.)")
_UNESCAPED = {"n": "\n", "t": "\t", "r": "\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\n\t\r]')
_ESCAPED = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


class Malformed(Exception):
    """A problem at an offset of the line being parsed (internal to the parser)."""

    def __init__(self, offset: int, expected: str, found: str | None = None):
        super().__init__(expected)
        self.offset = offset
        self.expected = expected
        self.found = found


def found_at(text: str, offset: int) -> str:
    """Describe what stands at ``offset``, for an error message."""
    if offset >= len(text) or not text[offset:].strip():
        return "end of line"
    token = re.match(r'"[^"]*"?|[\w.%\-]+|\S', text[offset:].lstrip())
    return repr(token.group(0)[:30]) if token else "end of line"


def skip_space(text: str, offset: int) -> int:
    """The offset after any spaces and ``/*...*/`` comments (``/*index=5*/``)."""
    if offset >= len(text) or text[offset] not in " \t\n/":
        return offset
    match = SPACE_AND_COMMENTS.match(text, offset)
    return match.end() if match else offset


def expect(text: str, offset: int, token: str) -> int:
    """Skip spaces, require ``token``, and return the offset after it."""
    offset = skip_space(text, offset)
    if not text.startswith(token, offset):
        raise Malformed(offset, repr(token), found_at(text, offset))
    return offset + len(token)


def read_name(text: str, offset: int, what: str = "a name") -> tuple[str, int]:
    """Read a name with or without ``%``; return it without ``%`` and the end offset."""
    offset = skip_space(text, offset)
    match = NAME.match(text, offset)
    if not match:
        raise Malformed(offset, what, found_at(text, offset))
    return match.group(1), match.end()


def read_string(text: str, offset: int) -> tuple[str, int]:
    """Read a quoted string at ``offset``; return its unescaped value and end offset."""
    match = _STRING.match(text, offset)
    if not match:
        if text.startswith('"', offset):
            raise Malformed(len(text), 'a closing "', "end of line")
        raise Malformed(offset, "a quoted string", found_at(text, offset))
    return unescape(match.group(0)[1:-1]), match.end()


def unescape(raw: str) -> str:
    """Undo the C escapes XLA writes in strings."""
    if "\\" not in raw:
        return raw
    return _ESCAPE.sub(lambda m: _UNESCAPED.get(m.group(1), m.group(1)), raw)


def quote(value: str) -> str:
    """Quote a string the way XLA prints it."""
    return '"' + _NEEDS_ESCAPE.sub(lambda m: _ESCAPED[m.group(0)], value) + '"'


def scan_to(text: str, offset: int, stop_at_comma: bool) -> int:
    """Scan a bracketed or flat value and return where it ends.

    With ``stop_at_comma``, the value ends at the first comma outside any
    brackets or strings (or at the end of the text, or at a closing bracket
    that was not opened in it); otherwise ``text[offset]`` must be an opening
    bracket and the offset after its matching closer is returned.

    Raises:
        Malformed: Unbalanced or mismatched brackets, or an unterminated string.
    """
    open_brackets: list[str] = []
    for match in _STRUCTURE.finditer(text, offset):
        token = match.group(0)
        if token in _CLOSER:
            open_brackets.append(token)
        elif token in "}])":
            if not open_brackets:
                if stop_at_comma:
                    return match.start()
                raise Malformed(match.start(), "a value", repr(token))
            opener = open_brackets.pop()
            if _CLOSER[opener] != token:
                raise Malformed(match.start(), repr(_CLOSER[opener]), repr(token))
            if not open_brackets and not stop_at_comma:
                return match.end()
        elif token == ",":
            if stop_at_comma and not open_brackets:
                return match.start()
        elif token == '"':
            raise Malformed(len(text), 'a closing "', "end of line")
    if open_brackets:
        opener = open_brackets[-1]
        raise Malformed(len(text), f"{_CLOSER[opener]!r} to close {opener!r}", "end of line")
    return len(text)


def split_top_level(text: str, offset: int, end: int) -> list[tuple[int, int]]:
    """Split ``text[offset:end]`` at commas outside brackets; return (start, end) spans."""
    spans = []
    start = offset
    while True:
        stop = scan_to(text[:end], start, stop_at_comma=True)
        if stop < end and text[stop] != ",":
            raise Malformed(stop, "',' or the end of the list", repr(text[stop]))
        spans.append((start, stop))
        if stop >= end:
            return spans
        start = stop + 1
