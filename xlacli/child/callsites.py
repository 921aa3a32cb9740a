"""Where the user's code made each input tensor (child process only: imports torch).

A batch reaches the device through xlacli's ``to_device``, so torch_xla's IR
names that line for every input; the line the user needs is the one in their
own code that built the tensor (the slice returning a short last batch, the
``torch.cat`` that pads). A ``TorchFunctionMode`` active only while the user's
``get_inputs`` runs records, for each tensor a torch function returns, the
innermost frame of the user's code; after the call each leaf of the batch is
looked up by identity. It costs nothing during the step itself, but a
torch call under any ``TorchFunctionMode`` goes through Python dispatch
(about 0.1 ms for a ``torch.randint``): fine for ``compile``, not for a
``profile``'s timed steps. So it records only when the run records the ops'
stacks too (``XLA_HLO_DEBUG``, which ``capture/env.py`` sets for ``compile``
and never for a profile).

What it records goes into the step event as ``input_origins``:
``{"input 0": "/abs/data.py:21"}``, keyed like the input signature.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from xlacli.parse.frames import CodeRoots, Frame, current_code_roots


class _CreationRecorder(TorchFunctionMode):
    """Remembers the user's line behind each tensor a torch function returns."""

    def __init__(self, roots: CodeRoots):
        super().__init__()
        self.roots = roots
        self.lines: dict[int, tuple[torch.Tensor, str]] = {}

    def __torch_function__(
        self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None
    ) -> Any:
        result = func(*args, **(kwargs or {}))
        if isinstance(result, torch.Tensor) and not any(arg is result for arg in args):
            # An in-place op returns its argument: the tensor keeps the line that made it.
            line = user_line(sys._getframe(1), self.roots)
            if line is not None:
                # Keep the tensor alive with its id, so the id cannot be reused.
                self.lines[id(result)] = (result, line)
        return result


def user_line(frame: FrameType | None, roots: CodeRoots) -> str | None:
    """``file:line`` of the innermost user frame from ``frame`` outwards, if any."""
    while frame is not None:
        code = frame.f_code
        if roots.is_user(Frame(code.co_name, code.co_filename, frame.f_lineno)):
            return f"{code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


class InputOrigins:
    """Runs ``get_inputs`` under the recorder; maps each input to its user line."""

    def __init__(self, enabled: bool | None = None) -> None:
        self._roots = current_code_roots()
        self.enabled = os.environ.get("XLA_HLO_DEBUG") == "1" if enabled is None else enabled

    def call(
        self, get_inputs: Callable[[], Any], name_leaves: Callable[[Any], list[tuple[str, Any]]]
    ) -> tuple[Any, dict[str, str]]:
        """The batch and ``{"input <name>": "file:line"}`` for each tensor leaf
        made by a torch call in the user's code (nothing when disabled)."""
        if not self.enabled:
            return get_inputs(), {}
        recorder = _CreationRecorder(self._roots)
        with recorder:
            batch = get_inputs()
        origins = {}
        for name, leaf in name_leaves(batch):
            recorded = recorder.lines.get(id(leaf)) if isinstance(leaf, torch.Tensor) else None
            if recorded is not None and recorded[0] is leaf:
                origins[f"input {name}"] = recorded[1]
        return batch, origins
