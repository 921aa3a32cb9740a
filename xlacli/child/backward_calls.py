"""The user's lines that run a backward pass, and whether the steps trained
(child process only: imports torch).

The autograd engine runs a backward pass outside Python, so the graph's
backward ops carry no Python frame: torch_xla's HLO metadata for them has an
op name and no source line, and neither has the all-reduce the SPMD
partitioner makes of a gradient. ``loss.backward()`` is the line that made
them; this wrapper of ``torch.Tensor.backward`` notes it, once per call (a
frame walk per step, nothing per op).

Whoever drives the steps (xlacli's ``--train`` loop, a model file's own
``step()``, a script's loop), a backward pass or an optimizer step in a step
means the run trained: the reports say "training" from these counts, never
from the options alone (``--train`` is ignored when the file defines step()).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from xlacli.child.callsites import user_line
from xlacli.child.dynamo import hidden_from_dynamo
from xlacli.parse.frames import CodeRoots, Frame, current_code_roots


class BackwardCalls:
    """Wraps ``torch.Tensor.backward`` and watches every optimizer's ``step``;
    ``delta`` gives the step's lines and counts."""

    def __init__(self) -> None:
        self._roots: CodeRoots = current_code_roots()
        self._original: Callable[..., Any] | None = torch.Tensor.backward
        self._sites: list[str] = []
        self._calls = 0
        self._optimizer_steps = 0
        # The files of the optimizers that stepped (a class's own and its bases' up
        # to torch's Optimizer): the parent knows any optimizer's ops by them, not
        # only torch.optim's (Adafactor, Lion, a library's or the user's own).
        self._optimizer_files: set[str] = set()
        self._new_optimizer_files: list[str] = []
        self._classes_seen: set[type] = set()
        original = self._original
        sites = self

        def backward(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if torch.compiler.is_compiling():  # Dynamo traces it: only the original call
                return original(tensor, *args, **kwargs)
            sites._calls += 1
            site = user_line(sys._getframe(1), sites._roots)
            if site is not None and site not in sites._sites:
                sites._sites.append(site)
            return original(tensor, *args, **kwargs)

        torch.Tensor.backward = hidden_from_dynamo(backward)  # type: ignore[method-assign]
        self._step_hook = _optimizer_step_hook(self._count_optimizer_step)

    def _count_optimizer_step(self, optimizer: Any = None, *_: Any) -> None:
        self._optimizer_steps += 1
        if optimizer is None or type(optimizer) in self._classes_seen:
            return
        self._classes_seen.add(type(optimizer))
        for file in optimizer_files(type(optimizer), self._roots):
            if file not in self._optimizer_files:
                self._optimizer_files.add(file)
                self._new_optimizer_files.append(file)

    @property
    def trained(self) -> bool:
        """A backward pass ran since the last ``delta``: the iteration's own work (an
        optimizer update alone, synced apart from it, is not a new iteration)."""
        return bool(self._calls)

    def delta(self) -> dict[str, Any]:
        """``{"backward_sites": [...], "backward_calls": n, "optimizer_steps": n}``
        for what ran since the last call; keys with nothing to say are left out."""
        sites, self._sites = self._sites, []
        files, self._new_optimizer_files = self._new_optimizer_files, []
        counts = {"backward_calls": self._calls, "optimizer_steps": self._optimizer_steps}
        self._calls = self._optimizer_steps = 0
        return {
            **({"backward_sites": sites} if sites else {}),
            **({"optimizer_files": files} if files else {}),
            **{key: count for key, count in counts.items() if count},
        }

    def close(self) -> None:
        if self._original is not None:
            torch.Tensor.backward = self._original  # type: ignore[method-assign]
            self._original = None
        if self._step_hook is not None:
            self._step_hook.remove()
            self._step_hook = None


def optimizer_files(optimizer_class: type, roots: CodeRoots | None = None) -> list[str]:
    """Where an optimizer's code is: the files of its class's methods and of its
    bases' below torch's ``Optimizer`` (whose own file every optimizer shares),
    from their code objects (``torch.optim.Adafactor``'s module is
    ``torch.optim``, its code ``_adafactor.py``). A library's file whole (its
    update functions sit beside the class, as torch.optim's
    ``_single_tensor_adam``); the user's own optimizer as ``file:first-last``,
    its methods' lines, so the model beside it is not taken for the optimizer."""
    import inspect

    roots = roots or current_code_roots()
    spans: dict[str, tuple[int, int]] = {}
    for cls in optimizer_class.__mro__:
        if cls is torch.optim.Optimizer or cls is object:
            break
        for member in vars(cls).values():
            code = getattr(inspect.unwrap(member), "__code__", None) if callable(member) else None
            if code is None:
                continue
            lines = [line for _, _, line in code.co_lines() if line is not None]
            first, last = code.co_firstlineno, max(lines, default=code.co_firstlineno)
            low, high = spans.get(code.co_filename, (first, last))
            spans[code.co_filename] = (min(low, first), max(high, last))
    return [
        f"{file}:{first}-{last}" if roots.is_user(Frame("", file, first)) else file
        for file, (first, last) in spans.items()
    ]


def _optimizer_step_hook(hook: Callable[..., None]) -> Any:
    """torch's global post-hook of every optimizer's ``step()``; None if this torch has none."""
    try:
        from torch.optim.optimizer import register_optimizer_step_post_hook
    except ImportError:
        return None
    return register_optimizer_step_post_hook(hook)
