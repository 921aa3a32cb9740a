"""The loops of a model's source, read with ``ast``: which ``for`` loop holds a
line, what it iterates over, whether the line calls the loop's target (a layer)
or not (a batch), and the class a line belongs to. Cached by text: every graph
of a run asks about the same files."""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
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
    loops = [
        node
        for node in (_for_nodes(read_source(file)) if file.endswith(".py") else ())
        if node.lineno < line <= (node.end_lineno or node.lineno)
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


@lru_cache(maxsize=32)
def _for_nodes(text: str | None) -> tuple[ast.For, ...]:
    """The ``for`` loops of a source file, walked once per text (every graph of a
    storm asked again about the same lines of ``module.py``: ~10 ms a graph)."""
    tree = _parse(text)
    return tuple(node for node in ast.walk(tree) if isinstance(node, ast.For)) if tree else ()


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


_LOOP_NODES = (ast.For, ast.AsyncFor, ast.While)
_BRANCH_NODES = (ast.If, ast.IfExp, ast.While, ast.Match)
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _holding(tree: ast.Module, line: int) -> Sequence[ast.stmt | ast.expr]:
    """The nodes whose lines hold ``line``, outermost first, within its innermost
    function or class (the scope the line runs in)."""
    nodes = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (*_LOOP_NODES, *_BRANCH_NODES, *_SCOPE_NODES))
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    ]
    nodes.sort(key=lambda node: node.lineno)
    scopes = [index for index, node in enumerate(nodes) if isinstance(node, _SCOPE_NODES)]
    return nodes[scopes[-1] :] if scopes else nodes


def enclosing_loop(read_source: SourceReader, file: str, line: int) -> int | None:
    """The first line of the innermost ``for``/``while`` holding ``file:line`` in
    its function; None outside every loop, or in a module's ``forward`` (a stack
    of layers, never a loop over data)."""
    tree = _tree(read_source, file)
    if tree is None:
        return None
    held = _holding(tree, line)
    if held and isinstance(held[0], _SCOPE_NODES[:2]) and held[0].name == "forward":
        return None
    loops = [node.lineno for node in held if isinstance(node, _LOOP_NODES) and node.lineno < line]
    return loops[-1] if loops else None


def in_branch(read_source: SourceReader, file: str, line: int) -> bool | None:
    """Whether a Python branch (``if``/``else``, a conditional expression,
    ``while``, ``match``) holds or is ``file:line`` in its function; None when
    the source cannot be read."""
    tree = _tree(read_source, file)
    if tree is None:
        return None
    return any(isinstance(node, _BRANCH_NODES) for node in _holding(tree, line))
