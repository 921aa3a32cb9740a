"""A guard on torch's global state (``GLOBAL_STATE changed: grad_mode``), at the
user's lines.

Dynamo guards the grad mode and the autocast state a frame was traced under:
the same compiled model called in an evaluation loop under ``torch.no_grad()``
is traced again. No line of the compiled function reads that state, so the
recompile is placed at the call that entered it under the other state, with
the ``with torch.no_grad():`` around that call (or the decorator of the
function holding it) as where the user changed it.
"""

from __future__ import annotations

import ast

from xlacli.analysis.dynamo.guards import parse_source
from xlacli.paths import split_location

_PREFIX = "GLOBAL_STATE changed:"
# The state Dynamo names -> the calls that change it around a block.
_CONTEXTS = {
    "grad_mode": ("no_grad", "inference_mode", "enable_grad", "set_grad_enabled"),
    "autocast": ("autocast",),
}


def changed_states(guard: str | None) -> tuple[str, ...]:
    """``"GLOBAL_STATE changed: grad_mode, autocast"`` -> ``("grad_mode", "autocast")``."""
    if not guard or not guard.startswith(_PREFIX):
        return ()
    return tuple(part.strip() for part in guard[len(_PREFIX) :].split(",") if part.strip())


def state_changed_at(call: str, states: tuple[str, ...]) -> str | None:
    """The ``file:line`` of the innermost ``with`` (or decorator) around ``call``
    that changes one of ``states``; None when the source has none."""
    names = tuple(name for state in states for name in _CONTEXTS.get(state, ()))
    file, line = split_location(call)
    tree = parse_source(file) if names and line else None
    if tree is None or line is None:
        return None
    found: list[int] = []
    for node in ast.walk(tree):
        if not _spans(node, line):
            continue
        if isinstance(node, ast.With | ast.AsyncWith):
            found += [node.lineno for item in node.items if _calls(item.context_expr, names)]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += [d.lineno for d in node.decorator_list if _calls(d, names)]
    return f"{file}:{max(found)}" if found else None


def _spans(node: ast.AST, line: int) -> bool:
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    return start is not None and end is not None and start <= line <= end


def _calls(expr: ast.expr, names: tuple[str, ...]) -> bool:
    """``torch.no_grad()``, ``no_grad()``, ``torch.autocast("xla")``, bare ``torch.no_grad``."""
    target = expr.func if isinstance(expr, ast.Call) else expr
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name in names
