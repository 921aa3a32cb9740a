"""What watches every step, whatever drives the steps (child process only).

A model file's loop and a script's own syncs both go through the
``StepRecorder``; these observers add their facts to its events: SPMD's
meshes and shardings (``spmd.py``), Dynamo's frames and graph breaks
(``dynamo.py``), the ops traced onto XLA tensors (``host_time.py``), the
autocast state and device memory (``memory_probe.py``), the CPU fallbacks
of each value read's call site (``value_reads.py``), the lines that ran a
backward pass (``backward_calls.py``) and, in a compile run, the forward line
each backward op differentiates (``backward_sites.py``: a profile's window
scopes its own warm-up). Beside them, the writer of each new
graph's IR (``graph_ir.py``), which adds no field to the events but watches the
same syncs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from xlacli.child.backward_calls import BackwardCalls
from xlacli.child.backward_sites import BackwardSites
from xlacli.child.debug_log_repeats import RepeatFolder
from xlacli.child.dynamo import DynamoObserver
from xlacli.child.graph_ir import GraphIrWriter
from xlacli.child.host_time import OpTracingMeter
from xlacli.child.memory_probe import StepProbe
from xlacli.child.spmd import SpmdObserver
from xlacli.child.value_reads import ValueReadSites
from xlacli.run_folder.events import EventWriter
from xlacli.run_folder.request import STEADY_STEPS_BEFORE_PAUSE, CaptureRequest


class StepObservers:
    """The observers of one run, created before the target is imported or run.

    SPMD's must exist first: it wraps ``Mesh`` and ``mark_sharding`` before
    the user's code calls them.
    """

    def __init__(
        self,
        events: EventWriter,
        request: CaptureRequest,
        ir_dump: Path | None = None,
        debug_log: Path | None = None,
        native_ir_dump: Mapping[str, str] | None = None,
    ) -> None:
        self.events = events
        self.spmd = SpmdObserver(request.devices)
        self.dynamo = DynamoObserver()
        self.op_tracing = OpTracingMeter()
        self.probe = StepProbe()  # its device: the target's, once it exists
        self.value_reads = ValueReadSites()
        self.value_reads.install()
        self.backward = BackwardCalls()
        # A compile run's backward ops at the forward lines they differentiate
        # (compile cost by line): every graph it compiles has its frames recorded.
        self.backward_sites = BackwardSites()
        self._backward_lines = (
            request.debug_artifacts and request.mode == "lazy" and request.profile_logdir is None
        )
        self._steady_steps = 0  # steps in a row that compiled nothing
        if self._backward_lines:
            self.backward_sites.start()
        # Each new graph's IR, once (issue 23); before the target, so every tensor is seen.
        self.graph_ir: GraphIrWriter | None = None
        wanted = request.debug_artifacts and request.ir_dump and not request.ir_per_sync
        if ir_dump is not None and wanted:
            # A script run to its end may switch eager mode on before its first
            # graph: torch_xla's per-sync dump then takes over (graph_ir.py).
            self.graph_ir = GraphIrWriter(ir_dump, native_ir_dump if request.run_to_end else None)
            self.graph_ir.install()
            if request.target_kind == "script":
                self.graph_ir.hand_over_if_the_program_uses_eager_mode(Path(request.model_path))
            self.value_reads.graph_ir = self.graph_ir
        # The debug log folded where steps repeat (issue 23): it grows with what changes.
        self.repeats: RepeatFolder | None = None
        if debug_log is not None and request.debug_artifacts:
            self.repeats = RepeatFolder(debug_log)
        self._runtime_written = False
        self._closed = False

    @contextlib.contextmanager
    def usage_errors(self) -> Iterator[None]:
        """An impossible mesh fails as a usage error (exit 2), not as the model's."""
        with self.spmd.usage_errors():
            yield

    def runtime(self) -> None:
        """Once the target has touched the device: the ``runtime`` event (device
        count, SPMD on or off, the global mesh). Written once.

        Raises:
            UsageError: more devices were requested than the backend has.
        """
        if self._runtime_written:
            return
        import torch_xla

        self._runtime_written = True
        self.events.write(
            "runtime", device_count=torch_xla.device_count(), **self.spmd.start_fields()
        )

    def step_fields(self, traced: bool = False) -> dict[str, Any]:
        """What the observers add to a step event (each resets for the next step;
        a ``traced`` step's op tracing too, ``op_tracing.start()`` at its start)."""
        return {
            **self.dynamo.delta(),
            **(self.op_tracing.delta() if traced else {}),
            **self.probe.step_facts(),
            **self.value_reads.delta(),
            **self.backward.delta(),
        }

    def compiles_in_step(self, compiled: bool) -> None:
        """Whether the step just ended compiled: the backward ops' lines are
        recorded while graphs are new.

        Anomaly mode keeps a Python stack for every autograd node of every
        forward pass: on a cached step that is work for no graph (an 8-layer
        decoder's step: 0.5 s of CPU, as much as the step itself,
        docs/performance.md). It pauses after STEADY_STEPS_BEFORE_PAUSE steps in
        a row compiled nothing and starts again after a step that compiled, for
        the graphs that follow: a graph compiled first after such a stretch is
        traced before anyone knows it is new, and its backward ops keep the
        ``backward()`` call's line. The scope is no part of a graph's hash:
        pausing it changes no graph.
        """
        if not self._backward_lines:
            return
        self._steady_steps = 0 if compiled else self._steady_steps + 1
        if compiled:
            self.backward_sites.start()
        elif self._steady_steps >= STEADY_STEPS_BEFORE_PAUSE:
            self.backward_sites.pause()

    def after_step(self, step: int | None) -> None:
        """After a step's event (None: after the setup): the shardings it first asked
        for; the debug log folded if the step repeated the one before."""
        self.spmd.write_new_shardings(self.events, step)
        if self.repeats is not None:
            self.repeats.after_step()

    def close(self) -> None:
        """Remove the hooks; Dynamo's own counters, once, if Dynamo ran."""
        if self._closed:
            return
        self._closed = True
        if self.graph_ir is not None:
            self.graph_ir.uninstall()
        if self.repeats is not None:
            self.repeats.flush()
        self.probe.close()
        self.value_reads.close()
        self.backward.close()
        self.backward_sites.stop()
        summary = self.dynamo.summary()
        self.dynamo.close()
        if summary is not None:
            self.events.write("dynamo", **summary)
