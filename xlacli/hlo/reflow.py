"""HLO written with several statements on a line, put one statement a line.

XLA's parser treats line breaks as whitespace, so a module whose computation
sits on one line (a log, a test string, a JSON field) is valid HLO. xlacli's
parser reads statements by lines (its speed comes from that); when a file
fails to parse, it is read again reflowed: a line break before each
computation, instruction and closing brace, none inside a string, a
parenthesis or an attribute's braces. Line breaks are whitespace to XLA, so
the reflowed text is the same module.
"""

from __future__ import annotations

import re

# At module level: a computation's head (ENTRY, %name, or name followed by its
# parameter list). Inside a body: an instruction (ROOT, or a name and '=').
_MODULE_STATEMENT = re.compile(r"ENTRY\b|%|[\w.\-]+\s*\(")
_BODY_STATEMENT = re.compile(r"ROOT\b|%?[\w.\-]+\s*=(?!=)")


def reflow_hlo(text: str) -> str:
    """The text with one statement a line (see the module docstring)."""
    out: list[str] = []
    braces: list[str] = []  # "body" or "attribute", innermost last
    parens = 0
    in_string = False
    i = 0
    at_token_start = True
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\" and i + 1 < len(text):
                out.append(text[i + 1])
                i += 1
            elif char == '"':
                in_string = False
            i += 1
            continue
        if at_token_start and parens == 0 and _starts_statement(text, i, braces, out):
            out.append("\n")
        if char == '"':
            in_string = True
        elif char in "([":
            parens += 1
        elif char in ")]":
            parens = max(parens - 1, 0)
        elif char == "{" and parens == 0:
            # A body opens at module level after a space or ')'; a layout
            # (f32[2]{0}) or an attribute (name={...}) opens anywhere else.
            raw = out[-1][-1:] if out else ""
            body = not braces and (raw.isspace() or raw == ")")
            braces.append("body" if body else "attribute")
        elif char == "}" and parens == 0 and braces and braces.pop() == "body":
            out.append("\n}\n")
            i += 1
            at_token_start = True
            continue
        out.append(char)
        if char == "{" and parens == 0 and braces and braces[-1] == "body":
            out.append("\n")
        at_token_start = not (char.isalnum() or char in "_.-%")
        i += 1
    return re.sub(r"\n\s*\n", "\n", "".join(out)).strip() + "\n"


def _starts_statement(text: str, i: int, braces: list[str], out: list[str]) -> bool:
    previous = "".join(out[-8:]).rstrip()
    if previous.endswith(("ROOT", "ENTRY")) or previous.endswith(","):
        return False  # ROOT's instruction, ENTRY's computation, an attribute
    if not braces:
        return _MODULE_STATEMENT.match(text, i) is not None and not text.startswith("HloModule", i)
    if braces == ["body"]:
        return _BODY_STATEMENT.match(text, i) is not None
    return False
