"""Each new graph's IR, written once (child process only: imports torch_xla).

``XLA_SAVE_TENSORS_FILE`` makes torch_xla print the whole pending graph at
every sync, cached or not: on a small training step that is ~15-20 ms and
~15 KB per step, for an IR xlacli reads once per graph. torch_xla reads that
setting once per thread, so it cannot be switched off after the first
graph; xlacli leaves it unset and asks for the text itself, only when the
graph is new:

- before each ``torch_xla.sync()`` (the hook point ``sync_hook.py`` also
  uses: ``xu.getenv_as('XLA_SYNC_WAIT')``, read just before the native step
  marker), the tensors with pending IR are found and hashed
  (``_get_graph_hash``); a hash not seen before has its text taken
  (``_get_xla_tensors_text``, the converter the native dump uses);
- after the marker (``xm._run_step_closures``), if ``UncachedCompile``
  moved, the text is appended to ``raw/ir-dump.txt.0`` in the native dump's
  block format, with the index of the compile it belongs to (the parent
  joins it to that compile's graph hash: ``_get_graph_hash`` is not the
  hash torch_xla's logs print).

Dynamo's graphs are compiled through ``_xla_warm_up_cache`` on explicit
tensors, right after Dynamo hashes them (``_get_graph_hash``, wrapped: the
text is taken there, and written at the next hook if a compile followed).
A value read (``loss.item()``) compiles inside native code with no Python
hook point: its graph has no IR block (the report says so through
``ir_nodes: null``).

Finding the pending tensors: torch_xla keeps its live tensors in native code
and has no binding that returns them. Every Python tensor object passes
through the garbage collector's youngest generation, so xlacli looks at that
generation before every sync and before every collection (``gc.callbacks``),
and keeps a weak reference to each XLA tensor it sees: cost per step
proportional to the objects allocated, not to the heap. A tensor that never
had a Python object (a ``.grad`` never read) is not found; its graph's block
then names fewer roots than the compile's outputs, and the parent drops it
rather than show a wrong IR.
"""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.utils.utils as xu

from xlacli.child.sync_points import SYNC_WAIT_SETTING

MAX_FRAMES = 64
_XLAC: Any = torch_xla._XLAC


class XlaTensorTracker:
    """Weak references to every XLA tensor object created since it started."""

    def __init__(self) -> None:
        self._known: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()

    def start(self) -> None:
        gc.callbacks.append(self._before_collection)

    def stop(self) -> None:
        if self._before_collection in gc.callbacks:
            gc.callbacks.remove(self._before_collection)

    def _before_collection(self, phase: str, info: dict[str, Any]) -> None:
        # A collection moves the youngest generation's survivors out of it:
        # look at them first.
        if phase == "start":
            self.look()

    def look(self) -> None:
        known = self._known
        for obj in gc.get_objects(0):
            if isinstance(obj, torch.Tensor) and obj.device.type == "xla":
                known[id(obj)] = obj

    def pending(self) -> list[torch.Tensor]:
        """The live XLA tensors with IR not yet run, in torch_xla's order (tensor id)."""
        self.look()
        tensors = list(self._known.values())
        return pending_of(tensors) if tensors else []


def pending_of(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Those of ``tensors`` with pending IR, one per XLA tensor, ordered by id."""
    need = _XLAC._check_tensor_need_materialization(tensors)
    by_id = {
        _XLAC._xla_get_tensor_id(t): t for t, pending in zip(tensors, need, strict=True) if pending
    }
    return [by_id[key] for key in sorted(by_id)]


class GraphIrWriter:
    """Writes the IR of each graph a sync (or Dynamo's warm-up) compiles, once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tracker = XlaTensorTracker()
        self._texts: dict[bytes, str] = {}  # probe hash -> IR text (distinct graphs only)
        self._file: TextIO | None = None
        self._before: tuple[int, str | None] | None = None  # the sync under way
        self._dynamo: tuple[int, str | None, str] | None = None  # Dynamo's graph, not settled
        self._originals: tuple[Any, Any, Any] | None = None
        self._failed = False

    def install(self) -> None:
        """Hook the sync points; before the target runs, so every tensor is seen young."""
        self._originals = (xu.getenv_as, xm._run_step_closures, _XLAC._get_graph_hash)
        xu.getenv_as = self._getenv_as
        xm._run_step_closures = self._run_step_closures
        _XLAC._get_graph_hash = self._graph_hash
        self.tracker.start()

    def uninstall(self) -> None:
        self.tracker.stop()
        self._settle_dynamo()
        if self._originals is not None:
            xu.getenv_as, xm._run_step_closures, _XLAC._get_graph_hash = self._originals
            self._originals = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def _getenv_as(self, name: str, *args: Any, **kwargs: Any) -> Any:
        assert self._originals is not None
        if name == SYNC_WAIT_SETTING:  # sync() is about to run the step marker
            self._settle_dynamo()
            self._before = (_compiles(), self._probe(self.tracker.pending))
        return self._originals[0](name, *args, **kwargs)

    def _run_step_closures(self) -> Any:
        assert self._originals is not None
        before, self._before = self._before, None
        if before is not None and before[1] is not None and _compiles() != before[0]:
            self._write(before[0], before[1], _frames_text())
        return self._originals[1]()

    def _graph_hash(self, tensors: Any) -> Any:
        """Dynamo hashes a graph's tensors right before compiling them
        (``_xla_warm_up_cache``). Wrapping the compile itself would put a frame
        of ours where torch_xla reads the graph's cause; the compile is settled
        at the next hook instead."""
        assert self._originals is not None
        self._settle_dynamo()
        text = self._probe(lambda: pending_of(list(tensors)))
        self._dynamo = (_compiles(), text, _frames_text())
        return self._originals[2](tensors)

    def _settle_dynamo(self) -> None:
        """Dynamo's last hashed graph: written if a compile followed it."""
        dynamo, self._dynamo = self._dynamo, None
        if dynamo is None:
            return
        compiles_before, text, frames = dynamo
        if text is not None and _compiles() != compiles_before:
            self._write(compiles_before, text, frames)

    def _probe(self, find_pending: Callable[[], list[torch.Tensor]]) -> str | None:
        """The pending graph's text; taken only the first time its hash is seen."""
        if self._failed or self._originals is None:
            return None
        try:
            pending = find_pending()
            if not pending:
                return None
            key = bytes(self._originals[2](pending))
            text = self._texts.get(key)
            if text is None:
                text = self._texts[key] = _XLAC._get_xla_tensors_text(pending)
            return text
        except Exception as error:  # the IR is a bonus: never fail the user's sync for it
            self._failed = True
            print(f"xlacli: the graphs' IR is not recorded: {error}", file=sys.stderr)
            return None

    def _write(self, compile_index: int, text: str, frames: str) -> None:
        if self._file is None:
            self._file = self.path.open("a", encoding="utf-8")
        self._file.write(_block(compile_index, text, frames))
        self._file.flush()  # a run killed later keeps the graphs compiled so far


def _compiles() -> int:
    return met.counter_value("UncachedCompile") or 0


def _block(compile_index: int, ir_text: str, frames: str) -> str:
    """One graph in the native dump's text format, plus the compile it belongs to."""
    return (
        f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{frames}\n"
        f"Compile Index: {compile_index}\n\n## BEGIN_GRAPH\n{ir_text}\n## END_GRAPH\n\n"
    )


def _frames_text() -> str:
    return "".join(f"  {name} ({file}:{line})\n" for name, file, line in _python_frames())


def _python_frames() -> list[tuple[str, str, int]]:
    """The frames of the sync, innermost first, as torch_xla's dump lists them."""
    frames: list[tuple[str, str, int]] = []
    frame: Any = sys._getframe(1)
    while frame is not None and len(frames) < MAX_FRAMES:
        code = frame.f_code
        if code.co_filename != __file__:  # not this module's own hooks
            frames.append((code.co_name, code.co_filename, frame.f_lineno))
        frame = frame.f_back
    return frames
