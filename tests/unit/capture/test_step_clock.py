"""A step's clock spans what a bare loop's would: the batch, its move, the
step and the sync, and the device wait when the run waits; xlacli's own
bookkeeping after the sync (the recorder) and the batch's signature are not
the step's. In this process on XLA:CPU."""

from __future__ import annotations

import os
import time

import pytest

os.environ.setdefault("PJRT_DEVICE", "CPU")
torch = pytest.importorskip("torch")
torch_xla = pytest.importorskip("torch_xla")

from xlacli.capture.discover import LoadedModel  # noqa: E402
from xlacli.child.steps import StepRunner  # noqa: E402
from xlacli.errors import UsageError  # noqa: E402

PAUSE_S = 0.2  # far above a 4x4 step's own time, so the clocks cannot mistake it


def runner(after_sync, inputs=lambda step: torch.ones(4, 4)) -> StepRunner:
    loaded = LoadedModel(
        model=torch.nn.Linear(4, 4),
        inputs_for_step=inputs,
        step_fn=None,
        loss_fn=None,
        entry_site="model.py:1",
        inputs_site="model.py:2",
    )
    return StepRunner(
        loaded, torch_xla.device(), train=False, optimizer_name="sgd", warn=print,
        after_sync=after_sync,
    )  # fmt: skip


def bookkeeping(waited: bool):
    """The recorder's part after the sync: PAUSE_S of work, then the step's end
    as ``StepRecorder.synced`` gives it (the sync's return, or after a wait)."""

    def after_sync(ended: float) -> float:
        time.sleep(PAUSE_S)
        return time.perf_counter() if waited else ended

    return after_sync


def test_bookkeeping_after_the_sync_is_not_the_steps_time():
    record = runner(bookkeeping(waited=False)).run(0)
    assert record["wall_time_s"] < PAUSE_S
    assert record["input_signature"] == ["input 0 f32[4,4]"]


def test_a_device_wait_is_the_steps_time():
    # after_sync waited for the device: the step ends when the wait does.
    record = runner(bookkeeping(waited=True)).run(0)
    assert record["wall_time_s"] >= PAUSE_S


def test_a_batch_without_tensors_still_names_get_inputs():
    with pytest.raises(UsageError, match=r"get_inputs\(0\) returned list"):
        runner(lambda ended: ended, inputs=lambda step: [1, 2]).run(0)


def test_the_recorder_ends_a_step_at_the_sync_or_after_its_wait(tmp_path, monkeypatch):
    from xlacli.child import recorder as recorder_module
    from xlacli.run_folder.events import EventWriter

    # Lazy graphs (whatever Dynamo or eager mode another test of this process ran):
    # executions are counted by their lookups, so nothing need wait.
    monkeypatch.setattr(recorder_module, "lookups_count_executions", lambda: True)
    events = EventWriter(tmp_path / "events.jsonl")
    recorder = recorder_module.StepRecorder(events, None, 0, observers=None)
    assert recorder.synced(wait=False, ended=1.5) == 1.5
    # --wait-each-step: the device wait is the step's.
    before = time.perf_counter()
    assert recorder.synced(wait=True, ended=1.5) >= before
