"""Where a failed Dynamo guard's value was read, and where the user changed it.

Dynamo's ``recompile_reason`` names the guard and, in a note, the user's line
whose read of the value installed it::

    0/0: self.scale == 1.0    # return h * self.scale  # proj/model.py:29 in forward

(the path shortened to its last parts). That line, not the frame's ``def``, is
where the recompile comes from. When the guarded value is an attribute or a
global (``self.scale``, ``G['lr']``), the assignments to it in the user's files
outside ``__init__`` are where it changed between steps (``model.scale = 0.5``
in the loop): named as ``also``. When it is a value the compiled frame
received (an argument: ``scale == 1.0``, ``tensor 'x' size mismatch``), the
caller passed it: ``analysis/dynamo/guard_callers.py`` names the caller's lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# "... # <code> # <path>:<line> in <function>" at the end of a guard line.
_NOTE = re.compile(r"#[^#]*#\s*(?P<file>[^\s#]+):(?P<line>\d+)(?: in \S+)?\s*$")
# The guarded value: "self.scale == 1.0", "G['lr'] == 0.1", "L['self'].scale == 1.0".
_SUBJECT = re.compile(
    r"^\s*(?P<subject>[A-Za-z_][\w.\[\]'\"()]*?)\s*(?:==|!=|<=|>=|<|>|is\b|is not\b)"
)
_NAME = re.compile(r"""(?:\.(?P<attr>\w+)|\[['"](?P<key>\w+)['"]\])$""")
_GLOBALS = re.compile(r"""^G\[['"]\w+['"]\]$""")
# "tensor 'x' size mismatch ...", "___check_type_id(x, 9436...)", "len(xs) == 2".
_TENSOR = re.compile(r"^\s*tensor '(?P<subject>[^']+)'")
_CHECK_CALL = re.compile(r"^\s*(?:___check_\w+|len)\((?P<subject>[^,()]+)[,)]")
# Dynamo's name for the frame's locals (kept when a message was not stripped).
_LOCALS = re.compile(r"""L\[\s*['"](.*?)['"]\s*\]""")
# What a guard reads of a value that is still that value: x.size()[0], xs[1].
_ACCESSORS = re.compile(r"(?:\.size\(\)|\.stride\(\)|\.shape|\[\d+\])+$")


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


@dataclass(frozen=True)
class GuardedValue:
    """What a failed value guard checks: ``name``, an attribute (``self.scale``),
    a global (``G['lr']``) or a value the compiled frame received (an argument
    or a variable of the enclosing function: ``scale``, ``tensor 'x'``)."""

    name: str
    kind: str  # "attribute", "global" or "argument"
    index: int | None = None  # an item of a ``*args`` argument: ``args[0]``


def guarded_value(reason: str | None) -> GuardedValue | None:
    """The value the first failed guard checks: ``self.scale == 1.0`` -> the
    attribute ``scale``; ``G['lr'] == 0.1`` -> the global ``lr``; ``n == 3`` or
    ``tensor 'x' size mismatch ...`` -> the argument ``n``, ``x`` (Dynamo writes
    the frame's locals ``L['x']`` as ``x``). None when no name fits."""
    first = (reason or "").strip().splitlines()[0] if (reason or "").strip() else ""
    first = _LOCALS.sub(r"\1", re.sub(r"^\d+/\d+: ", "", first))
    match = _TENSOR.match(first) or _CHECK_CALL.match(first) or _SUBJECT.match(first)
    if match is None:
        return None
    item = re.fullmatch(r"(\w+)\[(\d+)\]", match["subject"].split(".size()")[0])
    if item is not None and item[1] != "self":
        return GuardedValue(item[1], "argument", int(item[2]))
    subject = _ACCESSORS.sub("", match["subject"])
    if _GLOBALS.match(subject):
        return GuardedValue(_NAME.search(subject)["key"], "global")  # type: ignore[index]
    if subject.startswith("___"):
        return None  # Dynamo's own (___stack0: a value handed over at a graph break)
    if re.fullmatch(r"\w+", subject) and subject != "self":
        return GuardedValue(subject, "argument")
    name = _NAME.search(subject)
    if name is not None and name["attr"]:
        return GuardedValue(name["attr"], "attribute")
    return None


def assignment_lines(file: str, name: str, *, is_global: bool) -> tuple[int, ...]:
    """Lines of ``file`` that assign ``name`` (``x.name = ...``; a global: ``name =``),
    outside ``__init__`` (where it gets its first value)."""
    tree = parse_source(file)
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
def parse_source(file: str) -> ast.AST | None:
    try:
        return ast.parse(Path(file).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def first_read_line(file: str, def_line: int, guarded: GuardedValue) -> int | None:
    """The first line of the function defined at ``def_line`` (its ``def`` or
    first decorator, as ``co_firstlineno`` says) that reads the guarded value
    (``x``, ``SCALE``, ``.scale``): where Dynamo first looked at it and so
    installed the guard, when its note does not say (a tensor, a global)."""
    function = function_at(file, def_line)
    if function is None:
        return None
    reads = [
        node.lineno
        for statement in function.body
        for node in ast.walk(statement)
        if isinstance(node, ast.expr) and _reads(node, guarded)
    ]
    return min(reads, default=None)


def _reads(node: ast.expr, guarded: GuardedValue) -> bool:
    if guarded.kind == "attribute":
        return isinstance(node, ast.Attribute) and node.attr == guarded.name
    return isinstance(node, ast.Name) and node.id == guarded.name and isinstance(node.ctx, ast.Load)


def function_at(file: str, def_line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function whose ``def`` (or first decorator) is at ``def_line``."""
    tree = parse_source(file)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if def_line in (first, node.lineno):
                return node
    return None
