"""The loops of a model's source, read with ``ast``: which ``for`` loop holds a
line, what it iterates over, whether the line calls the loop's target (a layer)
or not (a batch), and the class a line belongs to. Cached by text: every graph
of a run asks about the same files."""

from __future__ import annotations

import ast
from collections.abc import Callable
from functools import lru_cache

from xlacli.parse.frames import Frame

SourceReader = Callable[[str], str | None]


def loop_iterable(read_source: SourceReader, file: str, line: int) -> str | None:
    """The iterable of the ``for`` loop whose body holds ``file:line``, as written."""
    loops = _loops(read_source, file)
    inside = [(start, text) for start, end, text in loops if start < line <= end]
    return max(inside)[1] if inside else None


def calls_loop_target(read_source: SourceReader, file: str, line: int) -> bool:
    """Whether the line calls what its ``for`` loop iterates over: ``layer(hidden)``
    in ``for layer in self.layers``, ``self.layers[i](x)`` in ``for i in range(n)``.
    A loop over data calls a module with each batch (``model(batch)``): its
    iterations are steps, not layers."""
    tree = _tree(read_source, file)
    loops = [
        node
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.For) and node.lineno < line <= (node.end_lineno or node.lineno)
    ]
    if not loops:
        return False
    loop = max(loops, key=lambda node: node.lineno)
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    calls = (
        node
        for node in ast.walk(loop)
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno)
    )
    return any(_calls_one_of(call.func, targets) for call in calls)


def _calls_one_of(func: ast.expr, targets: set[str]) -> bool:
    """``layer(...)`` or ``self.layers[i](...)``; never ``batch.to(...)``."""
    if isinstance(func, ast.Name):
        return func.id in targets
    if isinstance(func, ast.Subscript):
        return any(isinstance(n, ast.Name) and n.id in targets for n in ast.walk(func.slice))
    return False


def enclosing_class(read_source: SourceReader, frame: Frame) -> str | None:
    tree = _tree(read_source, frame.file)
    classes = [
        node
        for node in (ast.walk(tree) if tree is not None else ())
        if isinstance(node, ast.ClassDef) and node.lineno <= frame.line <= (node.end_lineno or 0)
    ]
    return max(classes, key=lambda node: node.lineno).name if classes else None


def _loops(read_source: SourceReader, file: str) -> tuple[tuple[int, int, str], ...]:
    return _loops_in(read_source(file)) if file.endswith(".py") else ()


@lru_cache(maxsize=32)
def _loops_in(text: str | None) -> tuple[tuple[int, int, str], ...]:
    """The ``for`` loops of a source file: (first line, last line, iterable).
    Cached by text: every graph of a run asks about the same library files
    (``torch/nn/modules/module.py``...), and walking their trees once per
    graph made a 100-graph run spend seconds here."""
    tree = _parse(text)
    if tree is None:
        return ()
    return tuple(
        (node.lineno, node.end_lineno or node.lineno, _iterable_text(node.iter))
        for node in ast.walk(tree)
        if isinstance(node, ast.For)
    )


def _iterable_text(node: ast.expr) -> str:
    """``self.layers`` from ``self.layers``, ``enumerate(self.layers)`` or ``self.layers[:n]``."""
    while True:
        if isinstance(node, ast.Call) and node.args:
            node = node.args[0]
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return ast.unparse(node)


def _tree(read_source: SourceReader, file: str) -> ast.Module | None:
    return _parse(read_source(file)) if file.endswith(".py") else None


@lru_cache(maxsize=32)
def _parse(text: str | None) -> ast.Module | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None
