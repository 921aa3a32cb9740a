"""Failures the user can act on: their frames, not xlacli's, and a fix where one is known."""

from __future__ import annotations

import traceback
from pathlib import Path

# This package's own folder, one above capture/ (the child's frames in it are hidden).
_XLACLI_DIR = str(Path(__file__).resolve().parents[1])
# runpy: how xlacli runs a script as __main__, not the user's code.
_HIDDEN = (_XLACLI_DIR, "<frozen importlib", "importlib/__init__.py", "<frozen runpy>", "/runpy.py")


def format_user_traceback(error: BaseException, *, limit: int = 12) -> str:
    """Format ``error``'s traceback without xlacli's own frames.

    Library frames (torch, transformers...) stay: they say where the user's
    call ended up. Only the innermost ``limit`` frames are kept.
    """
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not any(hidden in frame.filename for hidden in _HIDDEN)
    ]
    lines = ["Traceback (most recent call last, xlacli's frames hidden):"]
    lines.extend(traceback.format_list(frames[-limit:]))
    lines.extend(traceback.format_exception_only(type(error), error))
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines).rstrip()


def describe_exception(error: BaseException) -> str:
    """``ValueError: message``, or just the type when the message is empty."""
    message = str(error)
    if isinstance(error, SystemExit):
        return f"SystemExit (sys.exit({error.code!r}))"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def failure_hint(error: BaseException) -> str | None:
    """A fix for the exception, if one is known (``exception_hint``)."""
    frames = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
    return exception_hint(error, frames)


# torch.utils.checkpoint looks up ``torch.<device type>`` for its RNG state; torch_xla
# registers no ``torch.xla``, so on XLA it fails with this message (torch 2.9).
_NO_TORCH_XLA = "module 'torch' has no attribute 'xla'"
CHECKPOINT_HINT = (
    "torch.utils.checkpoint does not support the XLA device: use "
    "torch_xla.utils.checkpoint.checkpoint(fn, *args), a drop-in replacement that also keeps "
    "XLA from merging the recomputation back into the forward pass"
)


def exception_hint(error: BaseException, frames: list[str]) -> str | None:
    """A fix for an exception the user's step raised, when xlacli knows one.

    Args:
        error: the exception.
        frames: the file names of its traceback, outermost first.
    """
    if isinstance(error, AttributeError) and _NO_TORCH_XLA in str(error):
        if any(name.endswith("torch/utils/checkpoint.py") for name in frames):
            return CHECKPOINT_HINT
        return (
            "torch code looked up torch.xla, which torch_xla does not provide; if it is "
            "torch.utils.checkpoint, " + CHECKPOINT_HINT.split(": ", 1)[1]
        )
    return None
