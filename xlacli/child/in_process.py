"""One test's steps, recorded in the running process (imports torch_xla).

The pytest plugin's side of a capture: what the child does for a script
(``script_target.py``), done around one test function instead. Each
``torch_xla.sync()`` that runs a graph ends a step (``sync_hook.py``), each
host tensor moved to the device is part of the step's input signature
(``transfers.py``), and the same ``StepRecorder`` writes the same events, so
the report is built and explained by the code ``xlacli compile`` runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.debug.metrics as met
import torch_xla.runtime as xr

from xlacli.child.recorder import StepRecorder
from xlacli.child.sync_hook import SyncHook
from xlacli.child.transfers import TransferLog
from xlacli.run_folder.events import EventWriter

COMPILE_COUNTER = "UncachedCompile"


def compiles_so_far() -> int:
    """torch_xla's count of compilations in this process."""
    return met.counter_value(COMPILE_COUNTER) or 0


def compiles_since(start: int) -> int:
    """Compilations since the count was ``start``. A test that clears torch_xla's
    counters (``met.clear_all()``, as torch_xla's own tests do) is counted from
    the clear: never a negative count."""
    now = compiles_so_far()
    return now - start if now >= start else now


class _NoValueReads:
    """No per-call-site fallback counts in a test's process (the read wrappers would
    outlive the test)."""

    def delta(self) -> dict[str, Any]:
        return {}


class _NoObservers:
    """The test's own process has no SPMD, Dynamo or memory observers: they
    wrap torch_xla and torch for a whole run, and a test is one piece of one."""

    value_reads = _NoValueReads()

    def runtime(self) -> None:
        pass

    def step_fields(self, traced: bool = False) -> dict[str, Any]:
        return {}

    def after_step(self, step: int | None) -> None:
        pass

    def compiles_in_step(self, compiled: bool) -> None:
        pass  # no backward lines recorded in a test's process: nothing to pause

    def close(self) -> None:
        pass


class TestSteps:
    """Records the steps of one test into ``events`` (an ``events.jsonl``)."""

    __test__ = False  # not a test class, whatever pytest collects

    def __init__(self, events: Path):
        self._writer = EventWriter(events)
        self._recorder = StepRecorder(self._writer, None, 0, observers=_NoObservers())  # type: ignore[arg-type]
        self._transfers = TransferLog()
        self._hook = SyncHook(self._recorder, limit=None, wait=True, inputs=self._transfers.take)
        self.first_compile = compiles_so_far()
        self._stopped = False

    def start(self) -> None:
        """Start step 0: what ran before the test is not its own."""
        self._writer.write(
            "start",
            versions={"torch": torch.__version__, "torch_xla": torch_xla.__version__},
            device=str(xr.device_type()),
        )
        self._recorder.tracker.delta(final=True)  # the process's metrics so far are earlier tests'
        self._recorder.setup(entry_site=None, inputs_site=None)
        self._transfers.install()
        self._hook.install()

    @property
    def compiles(self) -> int:
        """Compilations since the test started."""
        return compiles_since(self.first_compile)

    @property
    def steps_done(self) -> int:
        """Steps ended so far (the number the next step takes)."""
        return self._recorder.steps_done

    def flush(self) -> None:
        """Wait for the graphs in flight, so their log lines are written."""
        xm.wait_device_ops()

    def stop(self) -> None:
        """Unhook; what ran after the last sync (a value read) is one more step."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self._hook.uninstall()
            self._transfers.uninstall()
            self.flush()
            self._recorder.finish(running=True)
            self._writer.write("end")
        finally:
            self._writer.close()
