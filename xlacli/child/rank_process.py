"""Recording inside a process the script started itself (child side: torch).

``torch.multiprocessing.spawn`` and ``xmp.spawn`` start fresh interpreters
that re-import the script as ``__mp_main__``, then call the user's function.
xlacli's follower (``spawn_follow.py``) starts each with ``follow(R)`` run
first, before ``multiprocessing`` prepares the process: the debug variables
point at ``RUN/rank-R/`` before torch_xla is imported, and the recorder and
the sync hook are installed before the script's own imports, as in the
child. The user's function comes wrapped in a ``FollowedCall``, which ends
the recording when it returns or raises.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import signal
from dataclasses import dataclass
from typing import Any

from xlacli.capture.failures import describe_exception, format_user_traceback
from xlacli.child.process_setup import (
    device_kind,
    import_torch_xla,
    interrupt_once,
    new_recorder,
    write_metrics_report,
)
from xlacli.child.stack_dumps import enable_stack_dumps
from xlacli.errors import EXIT_INTERRUPTED, ModelError
from xlacli.run_folder.events import EventWriter
from xlacli.run_folder.lifeline import request_parent_death_signal
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.spawned import RANK_ENV_VAR, RankTemplate

# This process's recording. Module state because the FollowedCall that ends it
# was made and pickled in the script's main process, and finds it only here.
_RECORDING: list[RankRecording] = []


def follow(rank: int) -> None:
    """Record this process as rank ``rank``: run before ``spawn_main``."""
    template = RankTemplate.loads(os.environ.pop(RANK_ENV_VAR))  # its own children: not ranks
    paths = RunPaths(template.folder_of(rank))
    # The main process's own IR dump (eager mode's, set by its graph_ir.py) is not
    # this rank's: the template names this rank's when the run dumps every sync.
    for name in paths.native_ir_dump_environment():
        os.environ.pop(name, None)
    os.environ.update(template.environment_of(rank))
    _own_output(paths)
    request_parent_death_signal()  # no orphan when the script's main process dies
    enable_stack_dumps()  # --hang-timeout's SIGUSR1 dumps into this rank's child.log
    signal.signal(signal.SIGTERM, interrupt_once)
    recording = RankRecording.start(CaptureRequest.load(paths.request), paths, rank)
    _RECORDING.append(recording)
    atexit.register(recording.finish, None)  # a process whose function was not wrapped


def _own_output(paths: RunPaths) -> None:
    """This rank prints into its own ``child.log``, as a torchrun rank does."""
    fd = os.open(paths.child_log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


@dataclass
class RankRecording:
    """The child's recording machinery, in a rank process."""

    paths: RunPaths
    events: EventWriter
    recorder: Any  # StepRecorder
    hook: Any  # SyncHook
    transfers: Any  # TransferLog
    finished: bool = False

    @classmethod
    def start(cls, request: CaptureRequest, paths: RunPaths, rank: int) -> RankRecording:
        events = EventWriter(paths.events)
        versions = import_torch_xla()
        from xlacli.child.sync_hook import SyncHook
        from xlacli.child.transfers import TransferLog

        events.write("start", versions=versions, device=device_kind(), rank=rank)
        if request.profile_logdir is not None:  # each rank's trace in its own folder
            request = dataclasses.replace(request, profile_logdir=str(paths.root / "tensorboard"))
        recorder = new_recorder(request, paths, events)
        transfers = TransferLog()
        limit = None if request.run_to_end else request.warmup + request.steps
        hook = SyncHook(recorder, limit=limit, wait=request.wait_each_step, inputs=transfers.take)
        recorder.setup(entry_site=None, inputs_site=None)
        transfers.install()
        hook.install()
        return cls(paths, events, recorder, hook, transfers)

    def finish(self, error: BaseException | None, name: str = "the function") -> None:
        """The user's function returned (``error`` None) or raised: the last
        events, then torch_xla's metrics report."""
        if self.finished:
            return
        self.finished = True
        self.hook.uninstall()
        self.transfers.uninstall()
        try:
            self.recorder.finish(running=error is not None)
        finally:
            if error is None:
                self.events.write("end")
            elif isinstance(error, KeyboardInterrupt):
                self.events.write(
                    "error", kind="interrupted", message="interrupted", exit_code=EXIT_INTERRUPTED
                )
            else:
                self._write_error(error, name)
            write_metrics_report(self.paths)
            self.events.close()

    def _write_error(self, error: BaseException, name: str) -> None:
        step = self.hook.step
        during = " before any step ran" if step == 0 else f" during step {step}"
        self.events.write(
            "error",
            kind=ModelError.__name__,
            message=f"{name} raised {describe_exception(error)}{during}",
            details=format_user_traceback(error),
            hint=None,
            exit_code=ModelError.exit_code,
        )


class FollowedCall:
    """The user's function, as a followed process runs it: ``--steps`` ends it
    quietly; its return or its exception ends the rank's recording."""

    def __init__(self, fn: Any):
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from xlacli.child.sync_hook import StepLimitReached

        recording = _RECORDING[0] if _RECORDING else None
        name = getattr(self.fn, "__qualname__", type(self.fn).__name__)
        try:
            result = self.fn(*args, **kwargs)
        except StepLimitReached:
            result = None  # --steps steps ran: the rank ends here, as the child does
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                if recording is not None:
                    recording.finish(exit_, name)
                raise
            result = None
        except BaseException as error:
            if recording is not None:
                recording.finish(error, name)
            raise
        if recording is not None:
            recording.finish(None, name)
        return result
