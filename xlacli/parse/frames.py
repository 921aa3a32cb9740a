"""Python frames as torch_xla prints them: ``fn (/path/file.py:12)``."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_FRAME = re.compile(r"^\s*(?P<function>.*?) \((?P<file>.*):(?P<line>\d+)\)\s*$")


@dataclass(frozen=True)
class Frame:
    """One Python frame: function, file and line."""

    function: str
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.function} ({self.file}:{self.line})"

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}"


def parse_frame(text: str) -> Frame | None:
    """Parse ``fn (file:line)``; None when the text is not a frame."""
    match = _FRAME.match(text)
    if match is None:
        return None
    return Frame(match["function"], match["file"], int(match["line"]))


@dataclass(frozen=True)
class CodeRoots:
    """Where library code lives, to tell the user's frames from the rest.

    Library: the standard library, site-packages, and xlacli itself. Anything
    else (the model's folder, the user's project) is the user's code.
    """

    library: tuple[str, ...]
    xlacli: str

    def is_user(self, frame: Frame) -> bool:
        # Asked for every frame of every op's stack (400k times for a 24-layer
        # decoder's report), of a few hundred distinct files.
        return _is_user_file(self, frame.file)

    def is_xlacli(self, frame: Frame) -> bool:
        return frame.file.startswith(self.xlacli)


@functools.lru_cache(maxsize=4096)
def _is_user_file(roots: CodeRoots, file: str) -> bool:
    if file.startswith("<") or "/site-packages/" in file or "/dist-packages/" in file:
        return False
    return not file.startswith(roots.library) and not file.startswith(roots.xlacli)


# torch_xla's Dynamo bridge: it syncs (``torch_xla.sync()``, ``_xla_sync_multi``)
# while it extracts and runs torch.compile's graphs. Those syncs are
# torch_xla's machinery, never the user's step or value read.
DYNAMO_BRIDGE_DIR = "/torch_xla/_dynamo/"


def in_dynamo_bridge(frames: tuple[Frame, ...] | list[Frame]) -> bool:
    """The sync ran inside torch_xla's Dynamo bridge (the openxla backend)."""
    return any(DYNAMO_BRIDGE_DIR in frame.file for frame in frames)


# torch_xla runs the step closures (``xm.add_step_closure``) from here, after the
# step's graph ran.
_STEP_CLOSURES = ("/torch_xla/core/xla_model.py", "_run_step_closures")


def in_step_closure(frames: tuple[Frame, ...] | list[Frame]) -> bool:
    """The read happened inside a step closure: advice to move it into one is
    advice already followed."""
    file, function = _STEP_CLOSURES
    return any(frame.function == function and frame.file.endswith(file) for frame in frames)


# torch.compile's backward: AOTAutograd's compiled backward, run by the autograd
# engine outside any Python frame of the user's.
_AOT_BACKWARD = ("/torch/_functorch/_aot_autograd/", ("backward", "_backward_impl"))


def in_compiled_backward(frames: tuple[Frame, ...] | list[Frame]) -> bool:
    """The compile or run happened in a torch.compile frame's backward graph."""
    folder, functions = _AOT_BACKWARD
    return any(folder in frame.file and frame.function in functions for frame in frames)


# xlacli's own package: none of its lines is ever a user's source (the
# script's ``.to()`` goes through a wrapper of ours, which torch_xla records
# as the innermost frame of the moved tensor).
XLACLI_PACKAGE = str(Path(__file__).resolve().parent.parent) + "/"


def outside_xlacli(location: str | None) -> str | None:
    """``location`` (``file:line``), or None when it points into xlacli's package."""
    if location is None or location.startswith(XLACLI_PACKAGE):
        return None
    return location


def first_user_frame(frames: tuple[Frame, ...] | list[Frame], roots: CodeRoots) -> Frame | None:
    """The innermost frame in the user's own code."""
    for frame in frames:
        if _is_user_file(roots, frame.file):
            return frame
    return None


class FirstUserFrames:
    """``first_user_frame`` of many stacks that share their tuples, each walked once.

    A protobuf's frame table gives every op of one stack the same tuple (a
    50-layer decoder's graph: 60k ops, a few thousand stacks): kept by the
    tuple's identity, the tuple held so that its id stays its own.
    """

    def __init__(self, roots: CodeRoots) -> None:
        self._roots = roots
        self._found: dict[int, tuple[tuple[Frame, ...], Frame | None]] = {}

    def __call__(self, stack: tuple[Frame, ...]) -> Frame | None:
        known = self._found.get(id(stack))
        if known is not None and known[0] is stack:
            return known[1]
        frame = first_user_frame(stack, self._roots)
        self._found[id(stack)] = (stack, frame)
        return frame


@functools.lru_cache(maxsize=8192)
def base_name(file: str) -> str:
    """``Path(file).name``, the way the IR names a file, asked once per op of a
    graph (100k) about a few hundred files."""
    return PurePosixPath(file).name


def current_code_roots() -> CodeRoots:
    """The library roots of the running interpreter (the child uses the same one)."""
    import sysconfig

    keys = ("stdlib", "platstdlib", "purelib", "platlib")
    library = tuple(sorted({sysconfig.get_paths()[key] + "/" for key in keys}))
    xlacli_dir = Path(__file__).resolve().parents[1]  # xlacli/, from xlacli/parse/
    return CodeRoots(library, str(xlacli_dir) + "/")


# Packages whose frames are the machinery of every run, never a framework's site.
RUNTIME_PACKAGES = frozenset({"torch", "torch_xla", "xlacli"})
# Packages whose frames only wrap a call (``@deprecated``): never the framework called.
WRAPPER_PACKAGES = frozenset({"typing_extensions"})


def framework_frame(frames: tuple[Frame, ...] | list[Frame], roots: CodeRoots) -> Frame | None:
    """When the user's line is one call into a framework (``trainer.train()``),
    the framework's own line that is the site: the innermost frame of the
    package the user called (its training loop, its evaluation loop, its
    logging read). None when the user called torch or torch_xla directly."""
    index = next((i for i, frame in enumerate(frames) if roots.is_user(frame)), None)
    if not index:
        return None
    # The package the user called, through any decorator's wrapper (a deprecated
    # ``xm.mark_step()`` goes through typing_extensions' ``wrapper`` first).
    called = (_package(frame.file) for frame in reversed(frames[:index]))
    package = next((name for name in called if name not in WRAPPER_PACKAGES), None)
    if package is None or package in RUNTIME_PACKAGES:
        return None
    return next(frame for frame in frames[:index] if _package(frame.file) == package)


def _package(file: str) -> str | None:
    for marker in ("/site-packages/", "/dist-packages/"):
        if marker in file:
            return file.rsplit(marker, 1)[1].split("/", 1)[0].removesuffix(".py")
    return None


# Dynamo's ``disable()`` wrapper, which xlacli puts around its own wrappers of
# torch methods (``child/dynamo.py``): a frame of ours in effect.
_DYNAMO_DISABLE = ("_fn", "/torch/_dynamo/eval_frame.py")


def without_our_wrappers(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """``frames`` (innermost first) without the Dynamo ``disable()`` frame that
    calls one of xlacli's wrappers: a bare run has neither, and it is not a
    library line the user's code went through."""
    kept = []
    for index, frame in enumerate(frames):
        calls_ours = index > 0 and frames[index - 1].file.startswith(XLACLI_PACKAGE)
        function, file = _DYNAMO_DISABLE
        if calls_ours and frame.function == function and frame.file.endswith(file):
            continue
        kept.append(frame)
    return tuple(kept) if len(kept) < len(frames) else frames
