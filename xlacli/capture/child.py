"""The child process: ``python -m xlacli.capture.child RUN/request.json``.

It imports torch and torch_xla (with the debug environment the parent set),
loads the model, runs the steps and appends events to ``events.jsonl`` as it
goes. Its exit code is the one the parent should exit with.
"""

from __future__ import annotations

import contextlib
import faulthandler
import signal
import sys
from pathlib import Path
from typing import Any

from xlacli.capture.device import DeviceStartError, start_device
from xlacli.capture.events import EventWriter
from xlacli.capture.lifeline import die_with_parent
from xlacli.capture.request import CaptureRequest, RunPaths
from xlacli.errors import EXIT_INTERRUPTED, EXIT_OK, CaptureError, XlacliError

REQUIRED_VERSIONS = {"torch": "2.9", "torch_xla": "2.9"}


def main(argv: list[str]) -> int:
    request_path = Path(argv[1])
    die_with_parent()  # reliability: no orphan if xlacli itself is killed
    request = CaptureRequest.load(request_path)
    paths = RunPaths(request_path.parent)
    # A crash in native code prints the Python stack into child.log.
    faulthandler.enable()
    # SIGTERM (a timeout, a CI cancel) ends like Ctrl-C: stop, flush, report.
    signal.signal(signal.SIGINT, _interrupt_once)
    signal.signal(signal.SIGTERM, _interrupt_once)
    events = EventWriter(paths.events)
    device_failed = False  # reliability: the runtime aborts if touched again
    try:
        return _run(request, paths, events)
    except XlacliError as error:
        device_failed = isinstance(error, DeviceStartError)
        events.write(
            "error",
            kind=type(error).__name__,
            message=error.message,
            details=error.details,
            hint=error.hint,
            exit_code=error.exit_code,
        )
        return error.exit_code
    except KeyboardInterrupt:
        events.write("error", kind="interrupted", message="interrupted", exit_code=EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    finally:
        if not device_failed:
            _write_metrics_report(paths)
        events.close()


def _run(request: CaptureRequest, paths: RunPaths, events: EventWriter) -> int:
    versions = _import_torch_xla()
    import torch_xla

    from xlacli.capture.dynamo import DynamoObserver
    from xlacli.capture.host_time import OpTracingMeter
    from xlacli.capture.memory_probe import StepProbe
    from xlacli.capture.spmd import SpmdObserver
    from xlacli.capture.steps import MetricTracker, StepRunner
    from xlacli.discover import ModelTarget, load_model

    tracker = MetricTracker()
    # SPMD: the model file's xr.use_spmd() must come before anything touches
    # the device, so the file is imported first and the observer records its
    # meshes and shardings (capture/spmd.py).
    spmd = SpmdObserver(request.devices)
    with spmd.usage_errors():
        loaded = load_model(ModelTarget(Path(request.model_path), request.model_entry))
    device = start_device()
    events.write(
        "start",
        versions=versions,
        device=_device_kind(),
        device_count=torch_xla.device_count(),
        **spmd.start_fields(),
    )
    dynamo = DynamoObserver()  # Dynamo's frames and graph breaks, if the step uses it
    op_tracing = OpTracingMeter()  # host time tracing torch ops onto XLA tensors
    runner = StepRunner(
        loaded,
        device,
        train=request.train,
        optimizer_name=request.optimizer,
        warn=lambda message: events.write("warning", message=message),
        wait_each_step=request.wait_each_step,
        mode=request.mode,
    )
    events.write(
        "setup", entry_site=loaded.entry_site, inputs_site=loaded.inputs_site, **tracker.delta()
    )
    spmd.write_new_shardings(events, None)
    window = _profile_window(request, events)
    probe = StepProbe(device)  # autocast and device memory, per step
    try:
        for step in range(request.warmup + request.steps):
            if window is not None and step == request.warmup:
                window.start()
            if window is not None and step - request.warmup == request.max_trace_steps:
                window.stop()  # reliability: bound the trace's memory
            traced = window is not None and window.active
            with (
                window.step(step) if window is not None else contextlib.nullcontext(),
                spmd.usage_errors(),
            ):
                record = runner.run(step)
            delta = tracker.delta()
            if window is not None and "UncachedCompile" not in delta["counters"]:
                window.compiles_settled()
            extra = {**dynamo.delta(), **op_tracing.delta(), **probe.step_facts()}
            events.write("step", step=step, traced=traced, **record, **delta, **extra)
            spmd.write_new_shardings(events, step)
    finally:
        probe.close()
        if window is not None:
            window.stop()
        _write_dynamo_summary(dynamo, events)
    events.write("end")
    return EXIT_OK


def _profile_window(request: CaptureRequest, events: EventWriter) -> Any:
    """The trace around the recorded steps, when the request profiles."""
    if request.profile_logdir is None:
        return None
    from xlacli.capture.profiler import ProfileWindow

    return ProfileWindow(Path(request.profile_logdir), request.profile_session or "xlacli", events)


def _write_dynamo_summary(dynamo: Any, events: EventWriter) -> None:
    """Dynamo's own counters, once at the end, if Dynamo ran."""
    summary = dynamo.summary()
    dynamo.close()
    if summary is not None:
        events.write("dynamo", **summary)


def _interrupt_once(signum: int, frame: Any) -> None:
    """Ctrl-C or SIGTERM: stop the run once; ignore repeats while it flushes.

    A terminal's Ctrl-C reaches both xlacli and the child, and xlacli forwards
    it too: a second KeyboardInterrupt must not cut the trace's flush short.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def _import_torch_xla() -> dict[str, str]:
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


def _device_kind() -> str:
    import torch_xla.runtime as xr

    return str(xr.device_type())


def _write_metrics_report(paths: RunPaths) -> None:
    """Save torch_xla's metrics report, if torch_xla got imported at all."""
    metrics: Any = sys.modules.get("torch_xla.debug.metrics")
    if metrics is None:
        return
    try:
        paths.metrics.write_text(metrics.metrics_report(), encoding="utf-8")
    except Exception as error:  # a report is a bonus; never mask the real outcome
        print(f"xlacli: could not write the metrics report: {error}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
