"""Where the caller gave a compiled function the value a failed guard checks.

A guard on an argument (``scale == 1.0``, ``tensor 'x' size mismatch``) fails
because the caller passed another value: ``scaled(x, scale)`` in the loop,
after ``scale = 0.5 if step >= 2 else 1.0``. The caller's frame is on the
stack torch_xla records when the compiled frame runs (the first user frame
outside it); the call is read from the source: the expression passed for the
guarded parameter and, when that is a variable, the lines that assign it
(those inside a loop around the call when there are any: the first value,
set before the loop, is no change). A value the compiled function reads from
its enclosing function (a closure) is assigned there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from xlacli.analysis.dynamo.guards import function_at, parse_source
from xlacli.parse.frames import Frame

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class PassedValue:
    """How the caller's code gave the compiled function a guarded value."""

    variable: str | None  # the caller's variable that holds it, if it is one
    assigned: tuple[str, ...]  # "file:line" of each assignment to it that changes it
    passed_at: str | None  # the call's "file:line" (None: a closure, not passed)


def passed_value(
    definition: str, name: str, call: Frame | None, index: int | None = None
) -> PassedValue | None:
    """How ``name`` (``index``: its item, for ``*args``), read by the function
    defined at ``definition`` (``file:line`` of its ``def``), came from the
    caller's ``call`` frame. None when the source cannot say (no call frame, a
    function not in a readable file)."""
    def_file, _, def_line = definition.rpartition(":")
    function = function_at(def_file, int(def_line)) if def_line.isdigit() else None
    if function is None:
        return None
    vararg = function.args.vararg
    if name not in _parameters(function) and not (vararg and vararg.arg == name):
        # A closure: the enclosing function assigns it (around the call, when
        # the call is in that function too, so that the loop is known).
        here = call.line if call is not None and call.file == def_file else function.lineno
        lines = _assignments(def_file, name, here, skip=function)
        return PassedValue(name, tuple(f"{def_file}:{n}" for n in lines), None)
    if call is None:
        return None
    expression = _argument(call, function, name, index)
    variable = expression.id if isinstance(expression, ast.Name) else None
    lines = _assignments(call.file, variable, call.line) if variable else ()
    return PassedValue(variable, tuple(f"{call.file}:{n}" for n in lines), call.location)


def _parameters(function: _Function) -> list[str]:
    arguments = function.args
    return [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]


def _argument(call: Frame, function: _Function, name: str, item: int | None) -> ast.expr | None:
    """The expression the call at ``call`` passes for the parameter ``name``
    (for ``*args``, its item ``item``: torch.compile's wrapper of a module)."""
    positional = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    if positional and positional[0] in ("self", "cls"):
        positional = positional[1:]  # a method (a module's forward) called on its object
    vararg = function.args.vararg
    keyword: str | None = name
    most: int | None = None if vararg is not None else len(positional)
    if vararg is not None and vararg.arg == name:
        keyword, wanted = None, None if item is None else len(positional) + item
    else:
        wanted = positional.index(name) if name in positional else None
    for node in _calls_at(call.file, call.line):
        passed = next((k.value for k in node.keywords if keyword and k.arg == keyword), None)
        if passed is not None:
            return passed
        # Calls are walked outside in: a call nested in the arguments comes later.
        if (
            wanted is not None
            and wanted < len(node.args)
            and (most is None or len(node.args) <= most)
        ):
            argument = node.args[wanted]
            return None if isinstance(argument, ast.Starred) else argument
    return None


def _calls_at(file: str, line: int) -> Iterator[ast.Call]:
    tree = parse_source(file)
    if tree is None:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            yield node


def _assignments(
    file: str, variable: str, inside_line: int, skip: ast.AST | None = None
) -> tuple[int, ...]:
    """Lines that bind ``variable`` in the function around ``inside_line`` (the
    module when none; never ``skip``); only those inside a loop around that
    line if any are."""
    tree = parse_source(file)
    if tree is None:
        return ()
    scope = _innermost_function(tree, inside_line, skip) or tree
    bound = sorted(set(_binding_lines(scope, variable)))
    loops = [
        node
        for node in ast.walk(scope)
        if isinstance(node, ast.For | ast.AsyncFor | ast.While)
        and node.lineno <= inside_line <= (node.end_lineno or node.lineno)
    ]
    in_loop = [
        line
        for line in bound
        if any(loop.lineno <= line <= (loop.end_lineno or loop.lineno) for loop in loops)
    ]
    return tuple(in_loop or bound)


def _innermost_function(tree: ast.AST, line: int, skip: ast.AST | None) -> _Function | None:
    around = [
        node
        for node in ast.walk(tree)
        if isinstance(node, _Function)
        and node is not skip
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    return max(around, key=lambda node: node.lineno, default=None)


def _binding_lines(scope: ast.AST, variable: str) -> Iterator[int]:
    """The line of each statement (or ``for``, ``with``, walrus) that stores ``variable``."""
    for node in ast.walk(scope):
        targets: list[ast.expr]
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(
            node, ast.AugAssign | ast.AnnAssign | ast.NamedExpr | ast.For | ast.AsyncFor
        ):
            targets = [node.target]
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            targets = [node.optional_vars]
        else:
            continue
        if any(isinstance(n, ast.Name) and n.id == variable for t in targets for n in ast.walk(t)):
            yield targets[0].lineno
