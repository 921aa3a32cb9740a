"""The user's lines that run a backward pass (child process only: imports torch).

The autograd engine runs a backward pass outside Python, so the graph's
backward ops carry no Python frame: torch_xla's HLO metadata for them has an
op name and no source line, and neither has the all-reduce the SPMD
partitioner makes of a gradient. ``loss.backward()`` is the line that made
them; this wrapper of ``torch.Tensor.backward`` notes it, once per call (a
frame walk per step, nothing per op).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

from xlacli.child.callsites import user_line
from xlacli.child.dynamo import hidden_from_dynamo
from xlacli.parse.frames import CodeRoots, current_code_roots


class BackwardCalls:
    """Wraps ``torch.Tensor.backward``; ``delta`` gives the step's lines."""

    def __init__(self) -> None:
        self._roots: CodeRoots = current_code_roots()
        self._original: Callable[..., Any] | None = torch.Tensor.backward
        self._sites: list[str] = []
        original = self._original
        sites = self

        def backward(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if torch.compiler.is_compiling():  # Dynamo traces it: only the original call
                return original(tensor, *args, **kwargs)
            site = user_line(sys._getframe(1), sites._roots)
            if site is not None and site not in sites._sites:
                sites._sites.append(site)
            return original(tensor, *args, **kwargs)

        torch.Tensor.backward = hidden_from_dynamo(backward)  # type: ignore[method-assign]

    def delta(self) -> dict[str, Any]:
        """``{"backward_sites": [...]}`` for the lines since the last call, or ``{}``."""
        sites, self._sites = self._sites, []
        return {"backward_sites": sites} if sites else {}

    def close(self) -> None:
        if self._original is not None:
            torch.Tensor.backward = self._original  # type: ignore[method-assign]
            self._original = None
