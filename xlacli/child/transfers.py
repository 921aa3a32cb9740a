"""Where a script moves its data to the device (child process only: imports torch).

A script has no ``get_inputs``: its inputs are the host tensors it moves to
the XLA device with ``tensor.to(device)`` (``.cuda()``-style code uses the
same call). Each move is recorded with the user's line that made it, and
becomes the step's input signature: ``input /path/train.py:42 f32[8,16]``.
``MpDeviceLoader`` moves batches in a thread of its own, not through here;
the recompile explainer then names the loop that fetched them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from xlacli.child.callsites import user_line
from xlacli.child.steps import xla_type
from xlacli.parse.frames import CodeRoots, current_code_roots


class TransferLog:
    """Wraps ``torch.Tensor.to`` while the script runs; ``take`` empties it."""

    def __init__(self) -> None:
        self._roots: CodeRoots = current_code_roots()
        self._original: Callable[..., Any] | None = None
        self._moves: list[str] = []

    def install(self) -> None:
        original = torch.Tensor.to
        self._original = original
        log = self

        def to(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, *args, **kwargs)
            moved = result is not tensor and tensor.device.type != "xla"
            if moved and result.device.type == "xla":
                log._moves.append(f"input {log._user_site()} {xla_type(result)}")
            return result

        torch.Tensor.to = to  # type: ignore[method-assign,assignment]

    def uninstall(self) -> None:
        if self._original is not None:
            torch.Tensor.to = self._original  # type: ignore[method-assign]
            self._original = None

    def take(self) -> list[str]:
        """The moves since the last call, in order."""
        moves, self._moves = self._moves, []
        return moves

    def _user_site(self) -> str:
        return user_line(sys._getframe(2), self._roots) or "?"
