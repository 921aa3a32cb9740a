"""Dynamo in the child: an observer that adds Dynamo's events to each step
(child process only: imports torch), and the ``--mode dynamo`` wrapper.

What it reads, and why these sources (torch 2.9):

- ``torch._dynamo.utils.get_compilation_metrics()``: one ``CompilationMetrics``
  per frame compile (function, file, first line, FX op count, the failed guard
  as ``recompile_reason``, compile time). It is what ``TORCH_TRACE``'s
  ``compilation_metrics`` records are made of, kept in memory whatever the
  logging settings, so reading it costs nothing while the model runs.
- The ``graph_breaks`` artifact logger (``TORCH_LOGS=graph_breaks``): the only
  source that gives each graph break with its user ``file:line`` and reason.
  Only its handler is ours; it does not propagate, so child.log stays as is.
- ``torch._dynamo.utils.counters`` at the end: Dynamo's own totals (frames,
  unique graphs, graph breaks by reason), to check the per-event records.

Installing a handler on the whole structured trace (``torch.__trace``) would
make every ``trace_structured`` call build its payload (guard dumps, graph
code), a cost paid on every frame compile; the three sources above cost none.
"""

from __future__ import annotations

import logging
import re
import sys
from typing import Any

from xlacli.errors import UsageError
from xlacli.parse.frames import CodeRoots, Frame, current_code_roots

GRAPH_BREAK_LOGGER = "torch._dynamo.symbolic_convert.__graph_breaks"
_BREAK_AT = re.compile(r"in user code at (?P<file>.*):(?P<line>\d+)\s*$")
_BREAK_REASON = "Graph Break Reason: "
_TRACEBACK_FRAME = re.compile(
    r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>.+)$'
)


class _GraphBreakHandler(logging.Handler):
    """Keeps each graph-break record Dynamo logs, parsed to location and reason."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.breaks: list[dict[str, Any]] = []
        self._roots = current_code_roots()  # the interpreter's: the same for every break
        # A library break's user line, by the break's file and line: Dynamo
        # prints the traceback once and suppresses it for duplicates.
        self._user_lines: dict[tuple[str, int], dict[str, Any]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        parsed = parse_graph_break(record.getMessage(), self._roots)
        if parsed is None:
            return
        site = (parsed["file"], parsed["line"])
        if "user_file" in parsed:
            self._user_lines[site] = {k: parsed[k] for k in ("user_file", "user_line")}
        else:
            parsed.update(self._user_lines.get(site, {}))
        self.breaks.append(parsed)


def parse_graph_break(message: str, roots: CodeRoots | None = None) -> dict[str, Any] | None:
    """``Graph break in user code at F:L\\nGraph Break Reason: R...`` ->
    ``{"file", "line", "reason"}``; None for another message.

    Dynamo's "user code" is any code it traced, libraries included. When the
    break is inside a library (``roots`` tell), ``user_file``/``user_line``
    name the innermost frame of the user's own code in the message's
    traceback: the call that led into the library.
    """
    lines = message.splitlines()
    if not lines:
        return None
    match = _BREAK_AT.search(lines[0])
    if match is None:
        return None
    reason = next((ln[len(_BREAK_REASON) :] for ln in lines if ln.startswith(_BREAK_REASON)), "")
    parsed: dict[str, Any] = {
        "file": match["file"],
        "line": int(match["line"]),
        "reason": reason.strip(),
    }
    if roots is not None and not roots.is_user(Frame("", parsed["file"], parsed["line"])):
        stack = [
            Frame(m["function"], m["file"], int(m["line"]))
            for m in map(_TRACEBACK_FRAME.match, lines)
            if m is not None
        ]
        user = next((frame for frame in reversed(stack) if roots.is_user(frame)), None)
        if user is not None:
            parsed.update(user_file=user.file, user_line=user.line)
    return parsed


class DynamoObserver:
    """Collects Dynamo's frame compiles and graph breaks, step by step."""

    def __init__(self) -> None:
        self._handler = _GraphBreakHandler()
        self._logger = logging.getLogger(GRAPH_BREAK_LOGGER)
        self._saved = (self._logger.level, self._logger.propagate)
        self._logger.setLevel(logging.DEBUG)
        self._logger.propagate = False
        self._logger.addHandler(self._handler)
        self._seen: set[tuple[str, float]] = set()
        self._last_metrics: Any = None  # the newest frame compile already read
        self._breaks_sent = 0

    def delta(self) -> dict[str, Any]:
        """The frame compiles and graph breaks since the last call (``{}``: none)."""
        frames = [_frame_record(m) for m in self._new_metrics()]
        breaks = self._handler.breaks[self._breaks_sent :]
        self._breaks_sent = len(self._handler.breaks)
        if not frames and not breaks:
            return {}
        return {"dynamo": {"frames": frames, "graph_breaks": breaks}}

    def summary(self) -> dict[str, Any] | None:
        """Dynamo's own counters, if Dynamo ran at all."""
        utils = sys.modules.get("torch._dynamo.utils")
        if utils is None:
            return None
        counters = {k: dict(v) for k, v in utils.counters.items() if v}
        if not counters.get("frames"):
            return None
        return {"counters": counters}

    def close(self) -> None:
        self._logger.removeHandler(self._handler)
        self._logger.setLevel(self._saved[0])
        self._logger.propagate = self._saved[1]

    def _new_metrics(self) -> list[Any]:
        utils = sys.modules.get("torch._dynamo.utils")
        if utils is None:
            return []
        # Most steps compile no frame: the newest record is the one read last
        # (a look at Dynamo's deque itself, not a copy of its 64 entries).
        live = getattr(utils, "_compilation_metrics", None)
        if live is not None and (not live or live[-1] is self._last_metrics):
            return []
        recorded = utils.get_compilation_metrics()
        if not recorded:
            return []
        self._last_metrics = recorded[-1]
        new = []
        for metrics in recorded:
            key = (str(metrics.compile_id), metrics.start_time or 0.0)
            if key not in self._seen:
                self._seen.add(key)
                new.append(metrics)
        return new


def _frame_record(metrics: Any) -> dict[str, Any]:
    return {
        "compile_id": str(metrics.compile_id),
        "function": metrics.co_name,
        "file": metrics.co_filename,
        "line": metrics.co_firstlineno,
        "fx_ops": metrics.graph_op_count,
        "guard_failure": metrics.recompile_reason,
        "compile_time_s": metrics.entire_frame_compile_time_s,
        "graph_breaks": len(metrics.restart_reasons or ()),
        "failure": metrics.fail_reason if metrics.fail_type else None,
    }


def hidden_from_dynamo(fn: Any) -> Any:
    """``fn`` (one of xlacli's wrappers of a torch method) run with Dynamo off.

    A compiled function that graph-breaks at the wrapped call (``.item()``)
    runs the rest in eager with Dynamo's frame hook on: the wrapper, and the
    Python functions it calls (a metrics read), would each become a frame
    Dynamo evaluates, which the user's run has not. Dynamo traces the method
    itself natively, so the wrapper never changes what it compiles.
    """
    import torch._dynamo

    return torch._dynamo.disable(fn, recursive=True)


def require_openxla_backend() -> None:
    """Raises:
    UsageError: this torch/torch_xla build has no ``openxla`` Dynamo backend."""
    import torch._dynamo
    import torch_xla  # noqa: F401  (registers the backend)

    check_backend_listed(torch._dynamo.list_backends(exclude_tags=()))


def check_backend_listed(backends: list[str]) -> None:
    """Raises:
    UsageError: ``openxla`` is not among Dynamo's backends."""
    if "openxla" not in backends:
        raise UsageError(
            "--mode dynamo needs torch.compile's 'openxla' backend, which this torch/torch_xla "
            "build does not register",
            hint="install matching torch and torch-xla 2.9 wheels, or use --mode lazy",
        )


def compile_with_openxla(fn: Any) -> Any:
    """``torch.compile(fn, backend="openxla")``: what ``--mode dynamo`` runs."""
    import torch

    require_openxla_backend()
    return torch.compile(fn, backend="openxla")
