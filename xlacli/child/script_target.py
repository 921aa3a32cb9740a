"""The script strategy: run an unmodified training script (a file, or a
``-m`` module) as ``__main__``; its own syncs are the steps (child process only).

The script is not touched before it runs: no device is created for it (an
SPMD script must call ``xr.use_spmd()`` before anything touches the device).
"""

from __future__ import annotations

import os
import runpy
import sys
import threading
from pathlib import Path
from typing import Any

from xlacli.capture.failures import describe_exception, format_user_traceback
from xlacli.child.recorder import StepRecorder
from xlacli.child.spawn_follow import SpawnFollower
from xlacli.child.sync_hook import StepLimitReached, SyncHook
from xlacli.child.transfers import TransferLog
from xlacli.errors import ModelError, NoStepError
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.spawned import RANK_ENV_VAR, RankTemplate

# What torchrun sets for each process; xlacli runs one process and sets none
# of them (a script that branches on them would change its behaviour).
TORCHRUN_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
TORCHRUN_HINT = (
    "the script expects torchrun's environment; xlacli runs one process: run "
    "RANK=0 LOCAL_RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 xlacli ..."
)


def run_script(request: CaptureRequest, recorder: StepRecorder, paths: RunPaths) -> None:
    """Run the script to its end, or until ``--steps`` steps have run.

    Raises:
        ModelError: the script raised, or exited with a non-zero code.
    """
    limit = None if request.run_to_end else request.warmup + request.steps
    transfers = TransferLog()
    hook = SyncHook(recorder, limit=limit, wait=request.wait_each_step, inputs=transfers.take)
    follower = spawn_follower(paths, recorder)
    _patch_xmp_spawn(recorder, follower)
    path = Path(request.model_path)
    recorder.setup(entry_site=None, inputs_site=None)
    _set_program(path, request)
    transfers.install()
    hook.install()
    if follower is not None:
        follower.install()
    try:
        _run_main(path, request)
        _join_script_threads()  # as Python's shutdown does: they may still sync
    except StepLimitReached:
        pass
    except SystemExit as exit_:
        _script_exited(exit_, hook, paths)
        if hook.step == 0 and not _followed(follower):
            raise NoStepError(
                f"{path.name} exited (sys.exit({exit_.code!r})) before any step ran",
                hint=NO_STEP_HINT,
            ) from None
    except Exception as error:
        raise ModelError(
            f"{path.name} raised {describe_exception(error)}{_during(hook)}",
            details=format_user_traceback(error),
            hint=TORCHRUN_HINT if _missing_torchrun_variable(error) else None,
        ) from None
    finally:
        hook.uninstall()
        transfers.uninstall()
        if follower is not None:
            follower.uninstall()
    if hook.step == 0 and not _followed(follower):
        raise NoStepError(_no_step_message(path.name), hint=NO_STEP_HINT)


def _missing_torchrun_variable(error: Exception) -> bool:
    """``os.environ["RANK"]`` and friends raise KeyError outside torchrun."""
    return isinstance(error, KeyError) and error.args[:1] in [(n,) for n in TORCHRUN_VARIABLES]


def _set_program(path: Path, request: CaptureRequest) -> None:
    """``sys.argv`` and ``sys.path`` as ``python train.py ARGS`` (or ``-m``) has them."""
    sys.argv = [str(path), *request.script_args]
    # python puts the script's folder first (-m: the working folder); the
    # child's own entries stay behind it (xlacli may be importable only there).
    sys.path.insert(0, os.getcwd() if request.module else str(path.parent))


def _run_main(path: Path, request: CaptureRequest) -> None:
    if request.module:
        runpy.run_module(request.module, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(str(path), run_name="__main__")


def _join_script_threads() -> None:
    """Wait for the threads the script left running (not daemons), as Python
    does before exiting: a script may train in one."""
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()


def _script_exited(exit_: SystemExit, hook: SyncHook, paths: RunPaths) -> None:
    """``sys.exit(0)`` (or ``None``) is a normal end; another code is a failure,
    shown with what the script printed last (argparse's usage message)."""
    code = exit_.code
    if code is None or code == 0:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    raise ModelError(
        f"{Path(sys.argv[0]).name} exited with {describe_exception(exit_)}{_during(hook)}",
        details=_printed_tail(paths) or None,
        hint=f"its output is in {paths.child_log}",
    )


def _during(hook: SyncHook) -> str:
    return " before any step ran" if hook.step == 0 else f" during step {hook.step}"


NO_STEP_HINT = (
    "a script must run its steps on the XLA device (torch_xla.device()) and sync them; "
    "a model file defines get_model() and get_inputs(step)"
)


def _no_step_message(name: str) -> str:
    return (
        f"{name} ran no step: it never synced a graph on an XLA device "
        "(torch_xla.sync(), xm.mark_step(), MpDeviceLoader...)"
    )


def _printed_tail(paths: RunPaths, lines: int = 12) -> str:
    """The last lines the script printed (the child's output goes to child.log)."""
    try:
        text = paths.child_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    shown = [line for line in text.rstrip().splitlines() if "Warning" not in line]
    return "\n".join(shown[-lines:])


def spawn_follower(paths: RunPaths, recorder: StepRecorder) -> SpawnFollower | None:
    """The follower of the processes the script starts itself, when the parent
    asked for one (``run_folder/spawned.py``; not under a launcher)."""
    template = os.environ.get(RANK_ENV_VAR)
    if template is None:
        return None
    return SpawnFollower(RankTemplate.loads(template), paths.request, recorder)


def _followed(follower: SpawnFollower | None) -> bool:
    """The script started processes xlacli followed: its steps are theirs."""
    return follower is not None and bool(follower.started)


def _patch_xmp_spawn(recorder: StepRecorder, follower: SpawnFollower | None) -> None:
    """``xmp.spawn(fn)`` (nprocs None) starts torch_xla's processes, followed as
    ranks; ``nprocs=1`` runs ``fn(0, ...)`` in this process, as torch_xla does.
    Any other nprocs (which torch_xla 2.9 refuses), or no follower: ``nprocs=1``,
    with a warning, so one process sees every step on XLA:CPU."""
    from torch_xla._internal import pjrt

    original = pjrt.spawn

    def spawn(
        fn: Any, nprocs: int | None = None, start_method: str = "spawn", args: Any = ()
    ) -> Any:
        if nprocs is None and follower is not None:
            return follower.xmp_spawn(original, fn, start_method, args)
        if nprocs != 1:
            recorder.warn(
                f"xmp.spawn(nprocs={nprocs}): xlacli runs one process (nprocs=1) on XLA:CPU"
            )
        return original(fn, 1, start_method, args)

    pjrt.spawn = spawn
