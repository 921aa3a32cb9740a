"""The parent's side of a capture: prepare the run folder, start the child,
follow its progress, and say how it ended. Never imports torch."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path

from xlacli.capture.env import capture_environment
from xlacli.capture.events import ChildLog, EventFollower, read_events
from xlacli.capture.request import CaptureRequest, RunPaths
from xlacli.errors import CaptureError, UsageError

DEFAULT_RUNS_DIR = Path(".xlacli") / "runs"
SUPPORTED = {"torch": "2.9", "torch-xla": "2.9"}
_POLL_S = 0.05


@dataclass(frozen=True)
class ChildOutcome:
    """How the child ended and what it logged."""

    returncode: int  # negative: killed by that signal
    log: ChildLog
    interrupted: bool  # the parent got Ctrl-C

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


def prepare_run_dir(out: Path | None, model_stem: str, *, force: bool) -> RunPaths:
    """Create a fresh run folder: ``out``, or a new one under ``.xlacli/runs/``.

    Raises:
        UsageError: ``out`` exists and ``force`` is off, or it is a file.
        CaptureError: the folder cannot be created or written.
    """
    if out is None:
        stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
        out = DEFAULT_RUNS_DIR / f"{model_stem}-{stamp}"
        suffix = 1
        while out.exists():
            suffix += 1
            out = DEFAULT_RUNS_DIR / f"{model_stem}-{stamp}-{suffix}"
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
) -> ChildOutcome:
    """Run the capture child to completion and return how it ended.

    Ctrl-C reaches the child too (same process group); the parent then waits
    for it to flush its artifacts, so nothing captured is lost.
    """
    request.save(paths.request)
    env = capture_environment(os.environ, request, paths)
    command = [sys.executable, "-m", "xlacli.capture.child", str(paths.request)]
    interrupted = False
    follower = EventFollower(paths.events)
    with paths.child_log.open("wb") as log, _sigterm_as_interrupt():
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        while True:
            try:
                returncode = process.wait(timeout=_POLL_S * 4 if on_progress else None)
                break
            except subprocess.TimeoutExpired:
                if on_progress is not None:
                    on_progress(follower.poll())
            except KeyboardInterrupt:
                interrupted = True
                returncode = _stop_child(process)
                break
    return ChildOutcome(returncode, read_events(paths.events), interrupted)


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``timeout``, a CI cancel) stops a capture like Ctrl-C: the child
    is told, flushes, and the partial report is written."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stop_child(process: subprocess.Popen[bytes], grace_s: float = 60.0) -> int:
    """Pass the interrupt on, give the child time to flush, then insist.

    A terminal's Ctrl-C already reached the child; a SIGINT sent to xlacli
    alone did not, so it is forwarded (the child ignores repeats).
    """
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGINT)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        try:
            return process.wait(timeout=_POLL_S)
        except subprocess.TimeoutExpired:
            continue
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting politely
            break
    process.terminate()
    try:
        return process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def log_tail(paths: RunPaths, lines: int = 15) -> str:
    """The last lines the child printed, for error messages."""
    try:
        text = paths.child_log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.rstrip().splitlines()[-lines:])
