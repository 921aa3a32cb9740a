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
A value read (``loss.item()``, ``bool(t)``, ``.tolist()``, ``.cpu()``)
compiles inside native code: ``value_reads.py`` wraps those methods and
calls ``sync_starting``/``sync_ended`` around them, and the read tensor's
graph is taken the same way; so is a sync of chosen tensors
(``_xla_sync_multi``: Dynamo's inputs before a cached graph runs,
``xm.unlazy``). A graph compiled where no hook sees it (a copy to the host by
``.to("cpu")``, say), or one none of whose tensors has pending IR (Dynamo's
graph of an output that is a clone of an input: one device-data node), has no
IR block (the report says so through ``ir_nodes: null``).

Eager mode (``torch_xla.experimental.eager_mode(True)``) compiles a graph
per op inside native code, and only torch_xla's own per-sync dump lists
those graphs (the debug log does not: ``parse/eager_ops.py``). torch_xla
reads ``XLA_SAVE_TENSORS_FILE`` at a thread's first graph, so for a run
whose length is unknown (a script run to its end) the choice is made then:
if eager mode is switched on before any graph ran, or the script's own text
switches it anywhere (an evaluation run eagerly after training), the writer
steps aside and sets that variable, and torch_xla's dump takes over for the
whole run.

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
import os
import re
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.utils.utils as xu
from torch._subclasses.fake_tensor import FakeTensor
from torch._subclasses.functional_tensor import FunctionalTensor

from xlacli.child.ir_text import END_OF_RUN_WAIT_S, GraphText, TextTaker
from xlacli.child.sync_points import SYNC_WAIT_SETTING
from xlacli.parse.ir_dump import IR_BLOCK_END

MAX_FRAMES = 64
PENDING_TEXTS = "ir-text-pending"  # beside the dump: texts forked copies are writing
# torch_xla.experimental.eager_mode(True), eager_mode_context(...), the binding itself.
_EAGER_SWITCH = re.compile(r"\beager_mode(?:_context)?\s*\(|\b_set_use_eager_mode\s*\(")
# Dynamo's and AOTAutograd's stand-ins: on the "xla" device, never torch_xla's.
_TRACING_TENSORS = (FakeTensor, FunctionalTensor)
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
            if (
                isinstance(obj, torch.Tensor)
                and not isinstance(obj, _TRACING_TENSORS)
                and obj.device.type == "xla"
            ):
                known[id(obj)] = obj

    def pending(self) -> list[torch.Tensor]:
        """The live XLA tensors with IR not yet run, in torch_xla's order (tensor id):
        the tensors torch_xla itself holds, inside functionalization's wrappers.

        Handing a wrapper to torch_xla syncs it first (``bridge::GetXlaTensor``):
        a view whose base changed since (``weight.t()`` kept by a traced graph) is
        replayed, new IR a sync then compiles: the probe changed the user's graphs
        (``t_copy``, ``detach_copy`` outputs in a Dynamo model's next graph).
        torch_xla's sync takes the inner tensors as they are, and so does this."""
        self.look()
        # A list first: unwrapping allocates, and a collection then (gc.callbacks)
        # adds to the dictionary.
        tensors = [_inner(t) for t in list(self._known.values())]
        return pending_of(tensors) if tensors else []


def _inner(tensor: torch.Tensor) -> torch.Tensor:
    """The XLA tensor inside a functionalization wrapper, not synced."""
    return torch._from_functional_tensor(tensor) if torch._is_functional_tensor(tensor) else tensor


def pending_of(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Those of ``tensors`` with pending IR, one per XLA tensor, ordered by id."""
    need = _XLAC._check_tensor_need_materialization(tensors)
    by_id = {
        _XLAC._xla_get_tensor_id(t): t for t, pending in zip(tensors, need, strict=True) if pending
    }
    return [by_id[key] for key in sorted(by_id)]


class GraphIrWriter:
    """Writes the IR of each graph a sync, a value read, a sync of chosen
    tensors or Dynamo's warm-up compiles, once.

    ``native_dump``: torch_xla's own dump's variables (``XLA_SAVE_TENSORS_FILE``),
    set if eager mode is switched on before the first graph (a run whose length
    is unknown); None: the writer stays for the whole run.
    """

    def __init__(self, path: Path, native_dump: Mapping[str, str] | None = None) -> None:
        self.path = path
        self.native_dump = native_dump
        self.tracker = XlaTensorTracker()
        self._texts: dict[bytes, GraphText] = {}  # probe hash -> IR text (distinct graphs only)
        self._taker = TextTaker(path.parent / PENDING_TEXTS, _XLAC._get_xla_tensors_text)
        self._blocks: list[tuple[int, GraphText, str]] = []  # compiled, text still being written
        self._file: TextIO | None = None
        self._before: tuple[int, GraphText | None] | None = None  # the sync under way
        self._dynamo: tuple[int, GraphText, str] | None = None  # Dynamo's graph, not settled
        self._originals: dict[str, Any] = {}
        self._failed = False
        self._stepped_aside = False  # torch_xla's own dump took over (eager mode)

    def _hooks(self) -> tuple[tuple[Any, str, Callable[..., Any]], ...]:
        return (
            (xu, "getenv_as", self._getenv_as),
            (xm, "_run_step_closures", self._run_step_closures),
            (_XLAC, "_get_graph_hash", self._graph_hash),
            (_XLAC, "_xla_sync_multi", self._sync_multi),
            (_XLAC, "_set_use_eager_mode", self._set_use_eager_mode),
        )

    def install(self) -> None:
        """Hook the sync points; before the target runs, so every tensor is seen young."""
        for owner, name, hook in self._hooks():
            self._originals[name] = getattr(owner, name)
            setattr(owner, name, hook)
        self.tracker.start()
        if _XLAC._get_use_eager_mode():
            self._hand_over_to_native_dump()

    def uninstall(self) -> None:
        self.tracker.stop()
        self._settle_dynamo()
        self._write_ready(deadline=time.monotonic() + END_OF_RUN_WAIT_S)
        self._taker.finish()
        if self._originals:
            for owner, name, _ in self._hooks():
                setattr(owner, name, self._originals[name])
            self._originals = {}
        if self._file is not None:
            self._file.close()
            self._file = None

    def _getenv_as(self, name: str, *args: Any, **kwargs: Any) -> Any:
        if name == SYNC_WAIT_SETTING:  # sync() is about to run the step marker
            self._settle_dynamo()
            self._write_ready()
            self._before = (_compiles(), self._probe(self.tracker.pending))
        return self._originals["getenv_as"](name, *args, **kwargs)

    def _run_step_closures(self) -> Any:
        before, self._before = self._before, None
        if before is not None and before[1] is not None and _compiles() != before[0]:
            self._write(before[0], before[1], _frames_text())
        return self._originals["_run_step_closures"]()

    def _graph_hash(self, tensors: Any) -> Any:
        """Dynamo hashes a graph's tensors right before compiling them
        (``_xla_warm_up_cache``). Wrapping the compile itself would put a frame
        of ours where torch_xla reads the graph's cause; the compile is settled
        at the next hook instead."""
        self._dynamo = self.sync_starting(list(tensors))
        return self._originals["_get_graph_hash"](tensors)

    def _sync_multi(self, tensors: Any, *args: Any, **kwargs: Any) -> Any:
        """A sync of chosen tensors (Dynamo's inputs before a cached graph runs,
        ``xm.unlazy``, ``xm.save``): their graph, as a value read's."""
        started = self.sync_starting(list(tensors))
        try:
            return self._originals["_xla_sync_multi"](tensors, *args, **kwargs)
        finally:
            self.sync_ended(started)

    def sync_starting(self, tensors: list[torch.Tensor]) -> tuple[int, GraphText, str] | None:
        """Native code is about to sync ``tensors`` (a value read's, a sync of
        chosen tensors): their pending graph (taken if new), the compile count and
        the frames; None: nothing pending. The tensors are handed as the call
        hands them: the call syncs their wrappers anyway."""
        self._settle_dynamo()
        text = self._probe(lambda: pending_of(tensors))
        return None if text is None else (_compiles(), text, _frames_text())

    def sync_ended(self, started: tuple[int, GraphText, str] | None) -> None:
        """The call is over: its graph is written if it compiled."""
        if started is not None and _compiles() != started[0]:
            self._write(*started)

    def _set_use_eager_mode(self, enable: bool) -> Any:
        if enable and _graphs_run() == 0:
            self._hand_over_to_native_dump()
        return self._originals["_set_use_eager_mode"](enable)

    def hand_over_if_the_program_uses_eager_mode(self, program: Path) -> None:
        """Before the program runs: if its own text switches eager mode (a
        training loop whose evaluation runs eagerly, once graphs have run), hand
        over now; later it would be too late. A library that switches it
        itself, after the first graph, leaves its op graphs unlisted."""
        try:
            text = program.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return
        if _EAGER_SWITCH.search(text):
            self._hand_over_to_native_dump()

    def _hand_over_to_native_dump(self) -> None:
        """Eager mode before the first graph: torch_xla's per-sync dump instead
        (it alone lists eager mode's op graphs), read by torch_xla at that graph."""
        if self.native_dump is None or self._stepped_aside:
            return
        os.environ.update(self.native_dump)
        self._stepped_aside = True

    def _settle_dynamo(self) -> None:
        """Dynamo's last hashed graph: written if a compile followed it."""
        dynamo, self._dynamo = self._dynamo, None
        self.sync_ended(dynamo)

    def _probe(self, find_pending: Callable[[], list[torch.Tensor]]) -> GraphText | None:
        """The pending graph's text (``ir_text.py``: formatted by a forked copy of
        the process while this one compiles); taken only the first time its hash
        is seen."""
        if self._failed or self._stepped_aside or not self._originals:
            return None
        try:
            pending = find_pending()
            if not pending:
                return None
            key = bytes(self._originals["_get_graph_hash"](pending))
            text = self._texts.get(key)
            if text is None:
                text = self._texts[key] = self._taker.take(pending)
            return text
        except Exception as error:  # the IR is a bonus: never fail the user's sync for it
            self._failed = True
            print(f"xlacli: the graphs' IR is not recorded: {error}", file=sys.stderr)
            return None

    def _write(self, compile_index: int, text: GraphText, frames: str) -> None:
        self._blocks.append((compile_index, text, frames))
        self._write_ready()

    def _write_ready(self, deadline: float | None = None) -> None:
        """The compiled graphs' blocks whose text is there, in compile order;
        with a ``deadline``, all of them (a text not there by then is lost)."""
        while self._blocks:
            compile_index, text, frames = self._blocks[0]
            if deadline is None and not text.ready():
                return
            self._blocks.pop(0)
            taken = text.text(deadline)
            if taken is None:
                self._taker.stop_forking(f"the IR of compile {compile_index} was not written")
                continue
            if self._file is None:
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(_block(compile_index, taken, frames))
            self._file.flush()  # a run killed later keeps the graphs compiled so far


def _compiles() -> int:
    return met.counter_value("UncachedCompile") or 0


def _graphs_run() -> int:
    """Graphs synced so far, compiled or found in a cache: torch_xla has read
    ``XLA_SAVE_TENSORS_FILE`` once this is not 0."""
    return _compiles() + (met.counter_value("CachedCompile") or 0)


def _block(compile_index: int, ir_text: str, frames: str) -> str:
    """One graph in the native dump's text format, plus the compile it belongs to."""
    return (
        f"[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n{frames}\n"
        f"Compile Index: {compile_index}\n\n## BEGIN_GRAPH\n{ir_text}\n{IR_BLOCK_END}\n\n"
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
