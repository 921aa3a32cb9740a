"""Name each backward op after the user line of the forward op it differentiates
(child process only: imports torch and torch_xla).

The autograd engine runs a backward pass on its own thread, where torch_xla
records no Python frames: the HLO of a training step's backward ops has no
source line. While frames are recorded (the warm-up, which compiles the
graphs a profile then runs), autograd's anomaly mode keeps each node's
forward stack, and every backward node runs under an IR scope naming the
innermost user line of that stack. The scope reaches the HLO op's metadata
(``op_name`` = ``<scope>/<op type>``); it is no part of a graph's hash, so the
graphs of the measured steps are the same ones, without the cost.

Anomaly mode asks ``torch.fx.traceback.format_stack()`` for each node's stack
(by name, at every node it records), which formats every frame and checks
every frame's file on disk: 1.8 s of a 50-layer decoder's 5 steps. Unless the
user's own anomaly mode is on (their errors then show the whole stack), the
stack recorded while xlacli's is on is only its innermost user frame, the one
line this module reads back: a walk up the frames, files judged once.
"""

from __future__ import annotations

import contextlib
import re
import sys
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch.fx.traceback as fx_traceback
import torch_xla

from xlacli.parse.frames import Frame, current_code_roots

# The scope's form, read back by xlacli.analysis.profile.op_lines (":" becomes "_" in
# the HLO, so the line number is set apart by "@").
SCOPE_PREFIX = "xlacli_backward_of@"
_STACK_LINE = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+), in (?P<function>.+)$')


class BackwardSites:
    """Anomaly mode plus a scope per backward node, until ``stop``."""

    def __init__(self) -> None:
        self._roots = current_code_roots()
        self._backward: Any = None
        self._open: dict[int, Any] = {}  # id(node) -> its scope pusher, popped when it ends
        self._anomaly = (False, True)  # the user's own anomaly mode, restored at stop
        self._active = False
        self._full_stack: Callable[[], list[str]] | None = None  # fx's, while ours stands in
        self._user_code: dict[Any, bool] = {}  # code object -> the user's own
        self._sites: dict[str, str | None] = {}  # stack entry -> its "file@line" or None

    def start(self) -> None:
        """Record forward stacks and scope backward nodes from now on (again,
        after ``pause``)."""
        if self._backward is None:
            self._anomaly = (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
            self._backward = torch.autograd.backward
            original = self._backward

            def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
                if self._active:
                    with contextlib.suppress(Exception):  # lines are a nicety; the backward is not
                        self._hook_graph(tensors)
                try:
                    return original(tensors, *args, **kwargs)
                finally:
                    self._open.clear()  # a node that raised leaves no scope open for the sync

            torch.autograd.backward = backward  # Tensor.backward calls it through the module
        if not self._active:
            self._active = True
            self._set_anomaly(True, check_nan=self._anomaly[0] and self._anomaly[1])
            if not self._anomaly[0]:
                self._full_stack = fx_traceback.format_stack
                fx_traceback.format_stack = self._innermost_user_frame

    def pause(self) -> None:
        """No stacks and no scopes until ``start``: the graphs are compiled. The
        wrapper stays (a library may have wrapped it since) and calls straight through."""
        if self._active:
            self._active = False
            self._set_anomaly(*self._anomaly)
            if self._full_stack is not None:
                fx_traceback.format_stack = self._full_stack
                self._full_stack = None

    def stop(self) -> None:
        """Back to plain autograd, for good."""
        self.pause()
        if self._backward is None:
            return
        torch.autograd.backward = self._backward
        self._backward = None

    @staticmethod
    def _set_anomaly(enabled: bool, check_nan: bool) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Anomaly Detection has been enabled"
            torch.autograd.set_detect_anomaly(enabled, check_nan=check_nan)

    def _hook_graph(self, tensors: Any) -> None:
        roots = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors or ())
        # A C++ node's Python object lives only while something holds it, and
        # ``next_functions`` makes a new one when it is gone: the walk keeps every
        # node it has seen, or an id is reused by another node (skipped: its lines
        # lost) or a node reached again comes back new (a residual network's
        # graph walked as a tree: exponential, a 12-layer GPT-2 filled 23 GB).
        seen: dict[int, Any] = {}
        pending = [t.grad_fn for t in roots if isinstance(t, torch.Tensor) and t.grad_fn]
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen[id(node)] = node
            site = self._user_line(node)
            if site is not None:
                self._scope_node(node, SCOPE_PREFIX + site)
            pending.extend(next_node for next_node, _ in node.next_functions if next_node)

    def _innermost_user_frame(self) -> list[str]:
        """``format_stack()``'s form, the innermost user frame only (none: empty).
        Under fx's preserved node metadata (Dynamo and export replaying a
        graph), fx's own answer: the stack it carries is not the frames'."""
        if fx_traceback.should_preserve_node_meta and self._full_stack is not None:
            return self._full_stack()
        frame: Any = sys._getframe(1)
        user_code = self._user_code
        while frame is not None:
            code = frame.f_code
            user = user_code.get(code)
            if user is None:
                user = user_code[code] = self._roots.is_user(Frame("", code.co_filename, 0))
            if user:
                return [f'  File "{code.co_filename}", line {frame.f_lineno}, in {code.co_name}\n']
            frame = frame.f_back
        return []

    def _user_line(self, node: Any) -> str | None:
        """The innermost user frame of the node's forward stack: ``file@line``."""
        stack = (getattr(node, "metadata", None) or {}).get("traceback_") or ()
        sites = self._sites
        for entry in reversed(stack):
            if entry not in sites:
                sites[entry] = self._entry_site(entry)
            site = sites[entry]
            if site is not None:
                return site
        return None

    def _entry_site(self, entry: str) -> str | None:
        """One stack entry's ``file@line`` if it is a user frame. Asked for every node of
        every backward pass: the same few hundred entries, read once each."""
        match = _STACK_LINE.match(entry.splitlines()[0] if entry else "")
        if match is None:
            return None
        frame = Frame(match["function"], match["file"], int(match["line"]))
        return f"{frame.file}@{frame.line}" if self._roots.is_user(frame) else None

    def _scope_node(self, node: Any, scope: str) -> None:
        key = id(node)  # a node runs once per backward pass, prehook then hook

        def enter(grad_outputs: Any) -> None:
            self._open[key] = torch_xla._XLAC.profiler.scope_pusher(scope)

        def leave(grad_inputs: Any, grad_outputs: Any) -> None:
            self._open.pop(key, None)  # the pusher's end pops the scope

        node.register_prehook(enter)
        node.register_hook(leave)
