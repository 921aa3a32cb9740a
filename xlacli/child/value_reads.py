"""Where a script reads tensor values on the host (child process only).

torch_xla counts CPU fallbacks per op, not per place. Reading a scalar
(``.item()``, ``bool(t)``, ``float(t)``, ``int(t)``) runs
``aten::_local_scalar_dense`` on the CPU, from the user's line, from a step
closure, or from inside a library (``xm.mesh_reduce``); ``.tolist()`` and
``.cpu()`` copy the tensor from the device without it (a metrics library's
``to_py_obj``). Wrapping those few methods while the target runs counts each
read at its call site: the user's line and, when the read is inside a
library, the library's line; a read is a fallback, or a copy from the device
(torch_xla's ``TransferFromDeviceTime`` samples). A few counter reads per
value read of an XLA tensor; nothing per traced op.

Each read is also timed (wall and process CPU), unless it compiled: the time
inside the read is the host cost of the sync it forces (building and hashing
the graph, running it, waiting for it, the copy), what the value-read advisor
prices (``xlacli.analysis.advice.value_reads``); a read that forced no graph (eager
mode, or a value a sync already computed) still waits for the device and
copies, and is timed the same way.

Not under ``--mode dynamo``: Dynamo would trace the wrappers and break its
graphs inside them; a frame the user compiles in lazy mode calls the original
method while Dynamo traces (``torch.compiler.is_compiling()``).
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch
import torch_xla.debug.metrics as met

from xlacli.child.dynamo import hidden_from_dynamo
from xlacli.child.graph_ir import GraphIrWriter
from xlacli.parse.frames import CodeRoots, Frame, current_code_roots

READ_FALLBACK = "aten::_local_scalar_dense"
COMPILES = "UncachedCompile"
READ_METHODS = ("item", "__bool__", "__float__", "__int__", "tolist", "cpu")
TRANSFERS = "TransferFromDeviceTime"
_DYNAMO_WRAPPER = os.path.join("torch", "_dynamo", "eval_frame.py")
Site = tuple[str, str | None, str | None]  # op, user file:line, library file:line


class ValueReadSites:
    """Counts the read fallbacks of each call site; ``delta`` empties it."""

    def __init__(self) -> None:
        self._roots: CodeRoots = current_code_roots()
        self._originals: dict[str, Callable[..., Any]] = {}
        self._counts: Counter[Site] = Counter()
        # (user line, library line) -> [reads timed, wall ns, process CPU ns, this thread's CPU ns]
        self._times: dict[tuple[str | None, str | None], list[int]] = {}
        self._reads: Counter[tuple[str | None, str | None]] = Counter()  # timed or not
        self._inside = False
        # The writer of each new graph's IR (graph_ir.py): a read compiles its
        # graph inside native code, where only this wrapper sees it start and end.
        self.graph_ir: GraphIrWriter | None = None

    def install(self) -> None:
        for name in READ_METHODS:
            original = getattr(torch.Tensor, name)
            self._originals[name] = original
            setattr(torch.Tensor, name, self._wrap(original))

    def close(self) -> None:
        for name, original in self._originals.items():
            setattr(torch.Tensor, name, original)
        self._originals.clear()

    def delta(self) -> dict[str, Any]:
        """Since the last call: ``fallback_sites``, [op, user line, library line, count];
        ``read_times``, [user line, library line, reads timed, wall ns, CPU ns, host ns]
        (host: this thread's CPU; the rest of the CPU ran the forced graph);
        ``read_counts``, [user line, library line, reads] (timed or not)."""
        if not self._reads:
            return {}
        fields: dict[str, Any] = {}
        if self._counts:
            fields["fallback_sites"] = [[*site, count] for site, count in self._counts.items()]
        if self._times:
            fields["read_times"] = [[*site, *times] for site, times in self._times.items()]
        fields["read_counts"] = [[*site, count] for site, count in self._reads.items()]
        self._counts.clear()
        self._times.clear()
        self._reads.clear()
        return fields

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        sites = self

        def read(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            # Under torch.compile, Dynamo traces this wrapper: it must see only
            # the original call, or it guards on our state and recompiles.
            if torch.compiler.is_compiling() or sites._inside or tensor.device.type != "xla":
                return original(tensor, *args, **kwargs)
            sites._inside = True  # item() inside bool() is one read
            graph = sites.graph_ir.sync_starting([tensor]) if sites.graph_ir else None
            before = met.counter_value(READ_FALLBACK) or 0
            copies = _transfers()
            compiles = met.counter_value(COMPILES) or 0
            wall, cpu, main = time.perf_counter_ns(), time.process_time_ns(), time.thread_time_ns()
            try:
                return original(tensor, *args, **kwargs)
            finally:
                wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
                main = time.thread_time_ns() - main
                sites._inside = False
                if graph is not None:
                    sites.graph_ir.sync_ended(graph)  # type: ignore[union-attr]
                ran = (met.counter_value(READ_FALLBACK) or 0) - before
                if ran > 0 or _transfers() > copies:
                    site = sites._site(sys._getframe(1))
                    sites._reads[site] += 1
                    if ran > 0:
                        sites._counts[(READ_FALLBACK, *site)] += ran
                    # A read that compiled paid a one-time cost, not what each step pays.
                    if (met.counter_value(COMPILES) or 0) == compiles:
                        sites._time(site, wall, cpu, main)

        return hidden_from_dynamo(read)

    def _time(self, site: tuple[str | None, str | None], *times_ns: int) -> None:
        times = self._times.setdefault(site, [0, 0, 0, 0])
        times[0] += 1
        for index, value in enumerate(times_ns, 1):
            times[index] += value

    def _site(self, frame: FrameType | None) -> tuple[str | None, str | None]:
        """The innermost user line and, if the read is inside a library, its line."""
        library: str | None = None
        while frame is not None:
            code = frame.f_code
            here = Frame(code.co_name, code.co_filename, frame.f_lineno)
            if self._roots.is_user(here):
                return here.location, library
            # Dynamo's disable() wrapper (which hides ours from Dynamo) is not the library
            # the read is inside.
            ours = self._roots.is_xlacli(here) or _DYNAMO_WRAPPER in here.file
            if library is None and not ours:
                library = here.location
            frame = frame.f_back
        return None, library


def _transfers() -> int:
    """Copies from the device so far (samples of torch_xla's transfer timer)."""
    data = met.metric_data(TRANSFERS)
    return int(data[0]) if data else 0
