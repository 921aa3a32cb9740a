"""The parent's side of a capture: prepare the run folder, start the child,
follow its progress, and say how it ended. Never imports torch."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from xlacli.capture.dump_stage import DumpStage, dump_stage
from xlacli.capture.env import capture_environment, flag_safe_dump_dir, is_flag_safe, rank_template
from xlacli.capture.ranks import RANK_FOLDER_PREFIX, rank_folder
from xlacli.capture.signals import StopSignals
from xlacli.errors import CaptureError, UsageError
from xlacli.run_folder.events import ChildLog, EventFollower, read_events
from xlacli.run_folder.hang import HANG_STACKS_ENV, HEARTBEAT_FILE
from xlacli.run_folder.lifeline import PARENT_PID_ENV
from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.spawned import RANK_ENV_VAR, RANK_PLACEHOLDER, spawned_processes

if TYPE_CHECKING:  # imported where used: starting the child needs neither
    from xlacli.capture.hang_watch import HangWatch

DEFAULT_RUNS_DIR = Path(".xlacli") / "runs"
SUPPORTED = {"torch": "2.9", "torch-xla": "2.9"}
_POLL_S = 0.05


@dataclass(frozen=True)
class ChildOutcome:
    """How the child ended and what it logged."""

    returncode: int  # negative: killed by that signal
    log: ChildLog
    interrupted: bool  # the parent got SIGINT or SIGTERM
    hung_after_s: float | None = None  # the hang watchdog stopped it after that long idle

    @property
    def signal_name(self) -> str | None:
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"


def check_torch_xla_installed() -> dict[str, str]:
    """Check torch and torch-xla are installed at supported versions, without importing them.

    Raises:
        CaptureError: one is missing or of another release.
    """
    from importlib import metadata  # ~20 ms: checked while the child starts

    versions = {}
    for name, wanted in SUPPORTED.items():
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            raise CaptureError(
                f"{name} is not installed in {sys.prefix}",
                hint="pip install 'torch==2.9.0' 'torch-xla==2.9.0'",
            ) from None
        if not versions[name].startswith(wanted):
            raise CaptureError(
                f"{name} {versions[name]} is installed; xlacli needs {name} {wanted}.x",
                hint="pip install 'torch==2.9.0' 'torch-xla==2.9.0'",
            )
    return versions


def prepare_run_dir(
    out: Path | None, model_stem: str, *, force: bool, runs_dir: Path | None = None
) -> RunPaths:
    """Create a fresh run folder: ``out``, or a new one under ``runs_dir``
    (default ``.xlacli/runs/`` in the working directory).

    Raises:
        UsageError: ``out`` exists and ``force`` is off, or it is a file.
        CaptureError: the folder cannot be created or written.
    """
    if out is None:
        runs_dir = runs_dir or DEFAULT_RUNS_DIR
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = runs_dir / f"{model_stem}-{stamp}"
        suffix = 1
        while out.exists():
            suffix += 1
            out = runs_dir / f"{model_stem}-{stamp}-{suffix}"
    elif out.exists():
        if not out.is_dir():
            raise UsageError(f"--out {out} is a file, not a folder")
        if not force:
            raise UsageError(
                f"output folder {out} already exists",
                hint="pass --force to replace it, or choose another --out",
            )
        _remove_run_dir(out)
    try:
        out.mkdir(parents=True)
        (out / "raw").mkdir()
    except OSError as error:
        raise CaptureError(f"cannot create the output folder {out}: {error.strerror}") from None
    return RunPaths(out.resolve())


def _remove_run_dir(out: Path) -> None:
    # Refuse to wipe a folder that does not look like one of ours.
    if any(out.iterdir()) and not (out / "request.json").exists():
        raise UsageError(
            f"{out} exists and is not an xlacli run folder; not replacing it",
            hint="choose another --out",
        )
    try:
        shutil.rmtree(out)
    except OSError as error:
        raise CaptureError(f"cannot replace {out}: {error.strerror}") from None


def run_child(
    request: CaptureRequest,
    paths: RunPaths,
    on_progress: Callable[[ChildLog], None] | None = None,
    *,
    stop: StopSignals | None = None,
    on_stopping: Callable[[str], None] | None = None,
    watch: HangWatch | None = None,
    follow_spawned: bool = False,
    read_dump: Callable[[Path, Path | None], contextlib.AbstractContextManager[None]] | None = None,
) -> ChildOutcome:
    """Run the capture child to completion and return how it ended.

    SIGINT and SIGTERM are caught in one place (``stop``; a new one when not
    given) and forwarded to the child's process group; the parent then waits
    for the child to flush its artifacts, so nothing captured is lost.
    ``on_stopping`` is told once, when that wait begins. ``watch``: the hang
    watchdog, which dumps the child's stack and stops it when no rank progresses.
    ``follow_spawned``: follow the processes the script starts itself into
    ``RUN/rank-R/`` (``run_folder/spawned.py``). ``read_dump(dump_dir, copy_to)``:
    entered while the child runs, to read its dump as it grows (``copy_to``:
    where the kept files go, when the dump is staged).
    """
    request.save(paths.request)
    with contextlib.ExitStack() as stack:
        if stop is None:
            stop = stack.enter_context(StopSignals())
        paths.xla_dump.mkdir(parents=True, exist_ok=True)
        stage = stack.enter_context(dump_stage())
        if stage is None:
            dump_dir = stack.enter_context(flag_safe_dump_dir(paths))
        else:
            dump_dir = stage.main
            # Runs once the child is gone, whatever ended it (unwound last-in first-out).
            stack.callback(stage.harvest, paths)
        env = capture_environment(os.environ, request, paths, dump_dir=dump_dir)
        env[PARENT_PID_ENV] = str(os.getpid())
        if watch is not None:
            env[HANG_STACKS_ENV] = "1"
        if follow_spawned:
            env.update(_spawn_environment(request, paths, stage))
        command = child_command(paths.request)
        log = stack.enter_context(paths.child_log.open("wb"))
        # Its own process group: a terminal's Ctrl-C reaches xlacli alone, which
        # forwards it once, and the whole group can be stopped together.
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )
        if read_dump is not None:  # left before the harvest (last in, first out)
            stack.enter_context(read_dump(dump_dir, paths.xla_dump if stage else None))
        follower = EventFollower(paths.events)
        returncode = _follow(process, stop, follower, on_progress, on_stopping, watch, paths)
    hung_after = watch.fired_after_s if watch is not None else None
    return ChildOutcome(
        returncode, read_events(paths.events), stop.received is not None, hung_after
    )


def child_command(request: Path) -> list[str]:
    """The child's command line: this xlacli's child, whatever the working folder
    holds (``child/boot/__main__.py`` says why not ``python -m``)."""
    boot = Path(__file__).resolve().parents[1] / "child" / "boot"  # from xlacli/capture/
    return [sys.executable, str(boot), str(request)]


def _spawn_environment(
    request: CaptureRequest, paths: RunPaths, stage: DumpStage | None
) -> dict[str, str]:
    """The variable that makes the child follow the script's own processes into
    ``RUN/rank-R/``; none where XLA_FLAGS could not name a rank's dump folder."""
    name = f"{RANK_FOLDER_PREFIX}{RANK_PLACEHOLDER}"
    folder = paths.root / name
    if not is_flag_safe(folder):
        return {}
    dump_dir = stage.rank(name) if stage is not None else None
    return {RANK_ENV_VAR: rank_template(os.environ, request, folder, dump_dir).dumps()}


def _follow(
    process: subprocess.Popen[bytes],
    stop: StopSignals,
    follower: EventFollower,
    on_progress: Callable[[ChildLog], None] | None,
    on_stopping: Callable[[str], None] | None,
    watch: HangWatch | None = None,
    paths: RunPaths | None = None,
    grace_s: float = 60.0,
) -> int:
    """Wait for the child, feeding progress; on a signal, forward it and give the
    child ``grace_s`` to flush (a second signal: no more waiting), then insist.
    When ``watch`` finds every rank stalled: the child's stack, then stop it."""
    deadline: float | None = None
    exited = _ExitWait(process)
    try:
        while True:
            returncode = exited.wait(_POLL_S * 4)
            if returncode is not None:
                return returncode
            if stop.received is not None and deadline is None:
                _signal_group(process, stop.received)
                deadline = time.monotonic() + grace_s
                if on_stopping is not None:
                    on_stopping(stop.name)
            if deadline is not None and (stop.count > 1 or time.monotonic() > deadline):
                return _kill_group(process)
            if on_progress is not None:
                on_progress(follower.poll())
            if watch is not None and paths is not None and deadline is None:
                spawned = spawned_processes(paths.root)  # the script's own ranks, if any
                pids = (process.pid, *(p.pid for p in spawned.values()))
                watch.beat(pids, paths.root / HEARTBEAT_FILE)
                if watch.stalled():
                    from xlacli.capture.hang_watch import dump_child_stacks

                    idle = watch.fired_after_s or 0.0
                    dump_child_stacks(process.pid, paths, idle, watch.timeout_s)
                    for rank, spawned_rank in spawned.items():
                        rank_paths = RunPaths(rank_folder(paths.root, rank))
                        dump_child_stacks(spawned_rank.pid, rank_paths, idle, watch.timeout_s)
                    watch.wait_for_peers()
                    return _kill_group(process)
    finally:
        exited.close()
        # Whatever the child left behind in its group (helpers it started) goes too.
        _signal_group(process, signal.SIGKILL)
        if paths is not None:
            (paths.root / HEARTBEAT_FILE).unlink(missing_ok=True)
            _wait_until_gone([p.pid for p in spawned_processes(paths.root).values()])


class _ExitWait:
    """Waits for the child to end, woken by its end: a pidfd (Linux 5.3+), where
    ``Popen.wait(timeout)`` looks every 50 ms at most (~25 ms of every run, after
    the child has ended, before the parent reads its files)."""

    def __init__(self, process: subprocess.Popen[bytes]):
        self._process = process
        try:
            self._fd: int | None = os.pidfd_open(process.pid)
        except (AttributeError, OSError):  # another system, or an older kernel
            self._fd = None

    def wait(self, timeout_s: float) -> int | None:
        """The child's exit code once it has ended, else None after ``timeout_s``."""
        if self._fd is None:
            try:
                return self._process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                return None
        select.select([self._fd], [], [], timeout_s)
        return self._process.poll()

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _wait_until_gone(pids: list[int], timeout_s: float = 5.0) -> None:
    """Wait until the ranks the script started have ended (a zombie has: it
    waits only to be reaped), so that none outlives the run."""
    if not pids:
        return
    from xlacli.capture.hang_watch import child_cpu

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        states = [child_cpu(pid) for pid in pids]
        if all(state is None or state[0] == "Z" for state in states):
            return
        time.sleep(_POLL_S)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def _kill_group(process: subprocess.Popen[bytes]) -> int:
    """SIGTERM the group, then SIGKILL it if the child is still there after 5 s."""
    _signal_group(process, signal.SIGTERM)
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        return process.wait()


def log_tail(paths: RunPaths, lines: int = 15) -> str:
    """The last lines the child printed, for error messages."""
    try:
        text = paths.child_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])
