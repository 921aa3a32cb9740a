"""Eager mode's steps: an optimizer step ends one (child process only).

With ``torch_xla.experimental.eager_mode(True)`` every op runs at once, so
nothing is pending when a script syncs: ``MpDeviceLoader``'s sync at each
batch finds no graph and ends no step, and a loop that never syncs (eager
ops, a ``torch.compile`` model, ``loss.item()`` to print) has no step at all.
Its training loop's iterations are its optimizer steps: torch.optim's global
post-hook (``register_optimizer_step_post_hook``) ends a step after each one
taken while eager mode is on, unless a sync already ended the iteration's
step (a ``torch_xla.compile`` step function, inside which eager mode is off).

The hook is registered only when the script turns eager mode on
(``torch_xla._XLAC._set_use_eager_mode``, which ``eager_mode(True)`` calls,
is wrapped): a lazy or ``torch.compile`` script never has it, so Dynamo never
meets it inside a compiled optimizer step.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch_xla
from torch.optim.optimizer import register_optimizer_step_post_hook


class EagerSteps:
    """Ends a step at each optimizer step taken in eager mode."""

    def __init__(self, end_step: Callable[[FrameType | None], None]) -> None:
        self._end_step = end_step  # given the optimizer step's caller frame
        self._original: Callable[[bool], Any] | None = None
        self._handle: Any = None
        self.synced = False  # a sync ended a step since the last optimizer step

    def install(self) -> None:
        xlac = torch_xla._XLAC
        original = xlac._set_use_eager_mode
        self._original = original
        watcher = self

        def set_use_eager_mode(enable: bool) -> Any:
            if enable and watcher._handle is None:
                watcher._handle = register_optimizer_step_post_hook(watcher._stepped)
            return original(enable)

        xlac._set_use_eager_mode = set_use_eager_mode
        if xlac._get_use_eager_mode():  # turned on before the script ran (an env var)
            set_use_eager_mode(True)

    def uninstall(self) -> None:
        if self._original is not None:
            torch_xla._XLAC._set_use_eager_mode = self._original
            self._original = None
        if self._handle is not None:
            self._handle.remove()
            self._handle = None

    def _stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not torch_xla._XLAC._get_use_eager_mode():
            return  # inside torch_xla.compile (or eager mode turned off): its sync ends the step
        if self.synced:
            self.synced = False
            return
        # 2: the optimizer's step wrapper, then its caller
        self._end_step(sys._getframe(2))
