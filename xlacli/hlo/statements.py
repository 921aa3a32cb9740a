"""Cutting HLO text into statements: XLA's parser ignores line breaks, so must we.

XLA prints one statement per line (the header, a computation's head, an
instruction, a closing brace), and the parser's fast paths are built on
that. People write HLO by hand too (tests, bug reports): an instruction
wrapped over several lines, a head split after its parameters, comments
anywhere. ``StatementReader`` hands out one statement at a time as text
with its first line number; a statement spans lines while brackets are
open, while the next line starts with ``,``, or when the parser asks for
more (``more``) because the text ended too early. Comments are blanked
with spaces, so offsets in the text still name the right column, and line
breaks are kept, so an offset also names the right line (``position``).

Only lines whose bracket counts do not balance, or that hold ``//`` or
``/*``, are scanned character by character: printed HLO rarely does. A
line that balances, holds no comment, does not end with ``,``, ``->`` or
``=`` and is not followed by a line starting with ``,`` is a statement by
itself: ``__next__`` hands it out without the general machinery (pushed
lines, look-ahead, joining), which costs more than reading the instruction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Strings (kept), comments (blanked), brackets (counted): one scan of a line.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+"|/\*.*?\*/|/\*|//|[{}\[\]()]')
_COMMENT_END = re.compile(r"\*/")
_INDEX_COMMENT = re.compile(r"/\*index=\d+\*/")
_OPENERS = "([{"
_INSTRUCTION_START = re.compile(r"\s*(?:ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=")
# A line with something to read (``# RUN: ...`` lines of lit tests are comments).
_CONTENT = re.compile(r"\s*[^\s#]")
_CONTINUATION = re.compile(r"\s*,")
_MAY_CONTINUE = frozenset(",=> \t")
MODULE_SEPARATOR = re.compile(r"\s*//\s*-{3,}\s*$")


def _balance(line: str) -> int:
    return (
        line.count("(")
        + line.count("[")
        + line.count("{")
        - line.count(")")
        - line.count("]")
        - line.count("}")
    )


class StatementReader:
    """Statements of HLO text, one at a time, comments blanked, wrapped lines joined.

    Attributes:
        line: The number of the first line of the statement last returned.
        text: That statement's text (lines joined with ``\\n``).
        last_line: The number of the last line read (for errors at the end).
    """

    def __init__(self, lines: Iterable[str], first_line: int = 1):
        # A list, so the fast path looks ahead by index instead of pushing lines back.
        self._lines: list[str] = lines if isinstance(lines, list) else list(lines)
        self._index = 0  # of the next line to read
        self._content_at = -1  # a line known to hold content (the fast path's look-ahead)
        self._first_line = first_line
        self._pushed: list[tuple[str, int]] = []  # cleaned lines handed back, last first
        self._in_comment = False
        self.line = 0
        self.text = ""
        self.last_line = first_line - 1
        self.ended_with_newline = True

    def _next_line(self) -> tuple[str, int] | None:
        """The next line, comments blanked (it may be blank), and its number."""
        if self._pushed:
            return self._pushed.pop()
        index = self._index
        if index >= len(self._lines):
            return None
        raw = self._lines[index]
        self._index = index + 1
        number = self._first_line + index
        self.last_line = number
        self.ended_with_newline = raw.endswith("\n")
        line = raw[:-1] if self.ended_with_newline else raw
        if self._in_comment or "//" in line or ("/*" in line and _has_other_comment(line)):
            line = self._blank_comments(line)
        return line, number

    def unread_lines(self) -> tuple[list[str], int, int] | None:
        """The raw lines, the index of the next one to read and the number of the first.

        For a reader that takes printed lines itself, then says how far it got
        (``skip_to``). None while a line is pushed back or a comment is open:
        the next statement must then come from here.
        """
        if self._pushed or self._in_comment:
            return None
        return self._lines, self._index, self._first_line

    def skip_to(self, index: int) -> None:
        """Count ``lines[:index]`` as read (by the caller of ``unread_lines``)."""
        if index > self._index:
            self._index = index
            self.last_line = self._first_line + index - 1
            self.ended_with_newline = self._lines[index - 1].endswith("\n")

    def _blank_comments(self, line: str) -> str:
        parts: list[str] = []
        position = 0
        if self._in_comment:
            end = _COMMENT_END.search(line)
            if end is None:
                return " " * len(line)
            parts.append(" " * end.end())
            position = end.end()
            self._in_comment = False
        for match in _TOKENS.finditer(line, position):
            token = match.group(0)
            if token.startswith("//"):
                parts.append(line[position : match.start()])
                return "".join(parts) + " " * (len(line) - match.start())
            if token.startswith("/*"):
                parts.append(line[position : match.start()])
                if token == "/*":  # runs past the end of the line
                    self._in_comment = True
                    return "".join(parts) + " " * (len(line) - match.start())
                if _INDEX_COMMENT.fullmatch(token):  # XLA's own: the readers skip it
                    continue
                parts.append(" " * len(token))
                position = match.end()
        parts.append(line[position:])
        return "".join(parts)

    def _next_content(self) -> tuple[str, int] | None:
        # The parser's hottest loop after the instruction reader: one regex per line.
        is_content = _CONTENT.match
        while True:
            item = self._pushed.pop() if self._pushed else self._next_line()
            if item is None or is_content(item[0]):
                return item

    def __iter__(self) -> StatementReader:
        return self

    def __next__(self) -> str:
        if not self._pushed and not self._in_comment:
            simple = self._next_simple()
            if simple is not None:
                return simple
        item = self._next_content()
        if item is None:
            raise StopIteration
        text, self.line = item
        text = self._complete(text)
        self.text = text
        return text

    def _next_simple(self) -> str | None:
        """The next line if it is a statement by itself (the printed case), else None.

        Nothing is consumed but blank lines when the answer is None: the
        general path then reads the line again.
        """
        lines, index = self._lines, self._index
        count = len(lines)
        is_content = _CONTENT.match
        if index != self._content_at:  # else the last look-ahead found content here
            while index < count and not is_content(lines[index]):
                index += 1
            self._index = index
        if index >= count:
            if count:  # the blank lines at the end count as read, as the general path reads them
                self.last_line = self._first_line + count - 1
                self.ended_with_newline = lines[-1].endswith("\n")
            return None
        raw = lines[index]
        ended_with_newline = raw[-1] == "\n"
        line = raw[:-1] if ended_with_newline else raw
        if "//" in line or ("/*" in line and _has_other_comment(line)):
            return None
        if not _parentheses_and_brackets_balance(line):
            return None
        braces = line.count("{") - line.count("}")
        if braces and not _is_simple_brace_line(line, braces):
            return None
        if _ends_open(line):
            return None
        following = index + 1
        while following < count and not is_content(lines[following]):
            following += 1
        self._content_at = following
        if following < count and _CONTINUATION.match(lines[following]):
            return None
        self._index = index + 1
        self.line = self.last_line = self._first_line + index
        self.ended_with_newline = ended_with_newline
        self.text = line
        return line

    def _complete(self, text: str) -> str:
        """Join lines while brackets are open or the next line goes on with ``,``."""
        while True:
            depth = _balance(text)
            if depth:
                depth, cut = _exact_depth(text, _is_head(text))
                if cut is not None:  # after a head's '{', or before a '}' closing more
                    if text[cut:].strip():
                        self._push_rest(text, cut)
                    return text[:cut]
            if depth > 0:
                if not self._join_next(text):
                    return text
                text = self._joined
                continue
            following = self._next_content()
            if following is None:
                return text
            if _CONTINUATION.match(following[0]) or _ends_open(text):
                self._join(text, following)
                text = self._joined
                continue
            self._pushed.append(following)
            return text

    def _push_rest(self, text: str, cut: int) -> None:
        # Spaces stand for what was cut off, so columns stay right.
        line_start = text.rfind("\n", 0, cut) + 1
        rest = " " * (cut - line_start) + text[cut:]
        self._pushed.append((rest, self.line + text.count("\n", 0, cut)))

    def _join_next(self, text: str) -> bool:
        following = self._next_line()
        if following is None:
            return False
        self._join(text, following)
        return True

    def _join(self, text: str, following: tuple[str, int]) -> None:
        line, number = following
        # Blank lines skipped in between stay as line breaks: offsets keep their line.
        gap = number - (self.line + text.count("\n"))
        self._joined = text + "\n" * max(gap, 1) + line

    def more(self) -> str | None:
        """The statement last returned, joined with the next non-blank line (None at the end)."""
        following = self._next_content()
        if following is None:
            return None
        self._join(self.text, following)
        self.text = self._complete(self._joined)
        return self.text

    def position(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of ``offset`` in the statement last returned."""
        return locate(self.text, self.line, offset)


def locate(text: str, first_line: int, offset: int) -> tuple[int, int]:
    """The 1-based line and column of ``offset`` in a statement starting at ``first_line``."""
    offset = min(offset, len(text))
    line_start = text.rfind("\n", 0, offset) + 1
    return first_line + text.count("\n", 0, offset), offset - line_start + 1


def _exact_depth(text: str, is_head: bool) -> tuple[int, int | None]:
    """Bracket depth at the end of ``text``, strings skipped; and where to cut it.

    A statement is cut after the ``{`` that opens a computation (``is_head``:
    the text is no instruction) and before a ``}`` that closes more than the
    statement opened, so ``ENTRY e { ROOT c = f32[] constant(0) }`` on one
    line makes three statements. The cut is None when the text needs none.
    """
    depth = 0
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        if token[0] == '"' or token[0] == "/":
            continue
        if token in _OPENERS:
            depth += 1
            # A head's body opens with the first '{' that is no layout (``f32[2]{0}``).
            if token == "{" and depth == 1 and is_head and text[match.start() - 1] != "]":
                return depth, match.end()
        else:
            depth -= 1
            if depth < 0:
                start = match.start()
                return depth, (start if text[:start].strip() else None)
    return depth, None


def closes_in_order(text: str) -> bool:
    """Whether the brackets of ``text`` (strings skipped) all close, none before it opens."""
    return _exact_depth(text, is_head=False) == (0, None)


def leaves_line_alone(part: str) -> bool:
    """Whether a part of a printed line keeps the line a statement by itself.

    ``__next__`` takes a line alone when its brackets balance by count, it
    holds no comment and it does not end open (``,``, ``->``, ``=``); a line
    whose parts (shape, literal, operand shapes, attribute text) each pass
    holds, so the fused path of ``xlacli.hlo.printed`` reads what the general
    path would. A part that fails sends its line to the general path.
    """
    return (
        _parentheses_and_brackets_balance(part)
        and part.count("{") == part.count("}")
        and "//" not in part
        and "/*" not in part
        and not _ends_open(part)
    )


def _parentheses_and_brackets_balance(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def _ends_open(text: str) -> bool:
    """Whether text ends with ``,``, ``->`` or ``=``: the statement goes on, the next line joins."""
    return bool(text) and text[-1] in _MAY_CONTINUE and text.rstrip().endswith((",", "->", "="))


def _is_simple_brace_line(line: str, braces: int) -> bool:
    """Whether an unbalanced line is a whole statement: a lone ``}`` or a head ending in ``{``.

    A head's text before its final ``{`` must hold no other ``{`` but layouts
    (``]{``), so the general path would cut it at that same ``{``.
    """
    if braces == -1:
        return line.strip() == "}"
    if braces != 1 or line[-1] != "{":
        return False
    before = line[:-1]
    return before.count("{") == before.count("]{") and _is_head(line)


def _is_head(text: str) -> bool:
    """Whether a statement may open a computation: no instruction, no module header."""
    return _INSTRUCTION_START.match(text) is None and not text.lstrip().startswith("HloModule")


def _has_other_comment(line: str) -> bool:
    """Whether a line holds a ``/* */`` comment other than XLA's ``/*index=N*/``."""
    return line.count("/*") != len(_INDEX_COMMENT.findall(line))
