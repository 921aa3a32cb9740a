"""The model-file strategy: load ``get_model``/``get_inputs`` and run xlacli's
own loop of steps (child process only: imports torch_xla)."""

from __future__ import annotations

from pathlib import Path

from xlacli.child.recorder import StepRecorder
from xlacli.run_folder.request import CaptureRequest


def run_model_file(request: CaptureRequest, recorder: StepRecorder) -> None:
    """Load the model file and run ``warmup + steps`` steps, each ending in a sync."""
    from xlacli.capture.discover import ModelTarget, load_model
    from xlacli.child.device import start_device
    from xlacli.child.steps import StepRunner

    # SPMD: the model file's xr.use_spmd() must come before anything touches
    # the device, so the file is imported first (capture/spmd.py records its
    # meshes and shardings); then the device starts, with a clear error if it cannot.
    loaded = load_model(
        ModelTarget(Path(request.model_path), request.model_entry),
        argv=request.script_args,
    )
    device = start_device()
    recorder.observers.runtime()  # the device count, SPMD and mesh; too many --devices: exit 2
    runner = StepRunner(
        loaded,
        device,
        train=request.train,
        optimizer_name=request.optimizer,
        warn=recorder.warn,
        after_sync=lambda ended: recorder.synced(wait=request.wait_each_step, ended=ended),
        mode=request.mode,
    )
    recorder.setup(entry_site=loaded.entry_site, inputs_site=loaded.inputs_site)
    for step in range(request.warmup + request.steps):
        recorder.begin(step)
        record = runner.run(step)
        recorder.end(step, **record)
    runner.finish(request.warmup + request.steps - 1)
