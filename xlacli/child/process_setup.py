"""What every capture process sets up the same way, whether it is the child
xlacli starts (``child.py``) or a rank a script spawns (``rank_process.py``):
importing torch_xla, the step recorder and its observers, the profile
window, the interrupt handler and the metrics report (child process only)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xlacli.child.stop import request_stop
from xlacli.errors import CaptureError
from xlacli.run_folder.events import EventWriter
from xlacli.run_folder.request import CaptureRequest, RunPaths

if TYPE_CHECKING:
    from xlacli.child.recorder import StepRecorder

REQUIRED_VERSIONS = {"torch": "2.9", "torch_xla": "2.9"}


def new_recorder(request: CaptureRequest, paths: RunPaths, events: EventWriter) -> StepRecorder:
    """The StepRecorder every strategy's steps go through, with its observers
    (SPMD, Dynamo, op tracing, autocast and device memory: each adds to the
    step events) and, when the request profiles, its trace window."""
    from xlacli.child.observers import StepObservers
    from xlacli.child.recorder import StepRecorder

    observers = StepObservers(
        events,
        request,
        paths.ir_dump_file,
        paths.debug_log,
        native_ir_dump=paths.native_ir_dump_environment(),
    )
    return StepRecorder(
        events,
        profile_window(request, events),
        request.warmup,
        observers=observers,
        max_trace_steps=request.max_trace_steps,
    )


def profile_window(request: CaptureRequest, events: EventWriter) -> Any:
    """The trace around the recorded steps, when the request profiles."""
    if request.profile_logdir is None:
        return None
    from xlacli.child.profiler import ProfileWindow

    return ProfileWindow(
        Path(request.profile_logdir),
        request.profile_session or "xlacli",
        events,
        backward_lines=request.mode == "lazy",
    )


def interrupt_once(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM: stop the run once; ignore repeats while it flushes.

    A terminal's Ctrl-C reaches both xlacli and the child, and xlacli forwards
    it too: a second KeyboardInterrupt must not cut the trace's flush short.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    request_stop()  # remembered: library code may swallow the exception
    raise KeyboardInterrupt


def import_torch_xla() -> dict[str, str]:
    """Import torch and torch_xla, checking the versions xlacli supports."""
    try:
        import torch
        import torch_xla
    except ImportError as error:
        raise CaptureError(
            f"cannot import {error.name or 'torch_xla'}: {error}",
            hint="pip install 'torch==2.9.0' 'torch-xla==2.9.0'",
        ) from None
    versions = {"torch": torch.__version__, "torch_xla": torch_xla.__version__}
    for name, wanted in REQUIRED_VERSIONS.items():
        if not versions[name].startswith(wanted):
            raise CaptureError(
                f"{name} {versions[name]} is installed; xlacli needs {name} {wanted}.x",
                hint="pip install 'torch==2.9.0' 'torch-xla==2.9.0'",
            )
    return versions


def device_kind() -> str:
    import torch_xla.runtime as xr

    return str(xr.device_type())


def write_metrics_report(paths: RunPaths) -> None:
    """Save torch_xla's metrics report, if torch_xla got imported at all."""
    metrics: Any = sys.modules.get("torch_xla.debug.metrics")
    if metrics is None:
        return
    try:
        paths.metrics.write_text(metrics.metrics_report(), encoding="utf-8")
    except Exception as error:  # a report is a bonus; never mask the real outcome
        print(f"xlacli: could not write the metrics report: {error}", file=sys.stderr)
