"""Where a failed Dynamo guard's value was read, and where the user changed it.

Dynamo's ``recompile_reason`` names the guard and, in a note, the user's line
whose read of the value installed it::

    0/0: self.scale == 1.0    # return h * self.scale  # proj/model.py:29 in forward

(the path shortened to its last parts). That line, not the frame's ``def``, is
where the recompile comes from. When the guarded value is an attribute or a
global (``self.scale``, ``G['lr']``), the assignments to it in the user's files
outside ``__init__`` are where it changed between steps (``model.scale = 0.5``
in the loop): named as ``also``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

# "... # <code> # <path>:<line> in <function>" at the end of a guard line.
_NOTE = re.compile(r"#[^#]*#\s*(?P<file>[^\s#]+):(?P<line>\d+)(?: in \S+)?\s*$")
# The guarded value: "self.scale == 1.0", "G['lr'] == 0.1", "L['self'].scale == 1.0".
_SUBJECT = re.compile(r"^\s*(?P<subject>[\w.\[\]'\"]+?)\s*(?:==|!=|is\b|is not\b)")
_NAME = re.compile(r"""(?:\.(?P<attr>\w+)|\[['"](?P<key>\w+)['"]\])$""")
_GLOBALS = re.compile(r"""^G\[['"]\w+['"]\]$""")


def guard_read_location(reason: str | None, user_files: Iterable[str]) -> str | None:
    """The user's ``file:line`` whose read installed the failed guard, if Dynamo noted it."""
    for line in (reason or "").splitlines():
        match = _NOTE.search(line)
        if match is None:
            continue
        file = _resolve(match["file"], user_files)
        if file is not None:
            return f"{file}:{match['line']}"
    return None


def _resolve(noted: str, user_files: Iterable[str]) -> str | None:
    """Dynamo shortens paths to their last parts: the user's file that ends so."""
    if Path(noted).is_absolute():
        return noted
    tail = "/" + noted.lstrip("./")
    return next((file for file in sorted(set(user_files)) if file.endswith(tail)), None)


def guarded_name(reason: str | None) -> tuple[str, bool] | None:
    """The attribute or global a value guard checks, and whether it is a global:
    ``self.scale == 1.0`` -> ("scale", False); ``G['lr'] == 0.1`` -> ("lr", True).
    None for a tensor guard or an argument's value."""
    first = re.sub(r"^\d+/\d+: ", "", (reason or "").strip().splitlines()[0] if reason else "")
    match = _SUBJECT.match(first)
    if match is None:
        return None
    subject = match["subject"]
    name = _NAME.search(subject)
    if name is None:
        return None
    if _GLOBALS.match(subject):
        return name["key"], True
    if name["attr"]:
        return name["attr"], False
    return None


def assignment_lines(file: str, name: str, *, is_global: bool) -> tuple[int, ...]:
    """Lines of ``file`` that assign ``name`` (``x.name = ...``; a global: ``name =``),
    outside ``__init__`` (where it gets its first value)."""
    tree = _parse(file)
    if tree is None:
        return ()
    lines: set[int] = set()
    module_level: list[int] = []
    for function, node in _assignments(tree):
        if function == "__init__":
            continue
        for target in _targets(node):
            if isinstance(target, ast.Attribute) and target.attr == name and not is_global:
                lines.add(node.lineno)
            elif is_global and isinstance(target, ast.Name) and target.id == name:
                if function:
                    lines.add(node.lineno)
                else:
                    module_level.append(node.lineno)
    # A global's first module-level assignment is its definition, not a change.
    lines.update(sorted(module_level)[1:])
    return tuple(sorted(lines))


def _assignments(tree: ast.AST) -> Iterable[tuple[str, ast.stmt]]:
    """Each assignment with the name of the function it is in ("" at module level)."""
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        function, node = stack.pop()
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                else function
            )
            if isinstance(child, ast.Assign | ast.AugAssign | ast.AnnAssign):
                yield function, child
            stack.append((inner, child))


def _targets(node: ast.stmt) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


@lru_cache(maxsize=32)
def _parse(file: str) -> ast.AST | None:
    try:
        return ast.parse(Path(file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None
