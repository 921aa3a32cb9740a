"""Launching TensorBoard (with the profile plugin) on a logdir, on localhost."""

from __future__ import annotations

import importlib.util
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

from xlacli.errors import CaptureError, UsageError
from xlacli.run_folder.lifeline import request_parent_death_signal

DEFAULT_PORT = 6006


def tensorboard_command(logdir: Path, port: int = DEFAULT_PORT) -> list[str]:
    """The command that serves ``logdir`` (TensorBoard's Profile tab reads it)."""
    return [
        sys.executable,
        "-m",
        "tensorboard.main",
        "--logdir",
        str(logdir),
        "--host",
        "localhost",
        "--port",
        str(port),
    ]


def shell_command(logdir: Path, port: int = DEFAULT_PORT) -> str:
    """The same, as a user types it."""
    return shlex.join(["tensorboard", "--logdir", str(logdir), "--port", str(port)])


def check_port_free(port: int) -> None:
    """Raise a clear error when something already listens on ``port``.

    The probe binds as servers do (TensorBoard's included), with
    ``SO_REUSEADDR``: a port whose last connection is in TIME_WAIT is free to
    them, so it is free here too.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("localhost", port))
        except OSError:
            raise UsageError(f"port {port} is already in use", hint="pass another --port") from None


def check_tensorboard_installed() -> None:
    """TensorBoard and the profile plugin are needed to view a trace."""
    from xlacli.parse.xprof_tools import xprof_available

    missing = [
        package
        for package, present in (
            ("tensorboard", importlib.util.find_spec("tensorboard") is not None),
            ("tensorboard-plugin-profile", xprof_available()),
        )
        if not present
    ]
    if missing:
        raise CaptureError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not installed, "
            "so --tensorboard cannot show the trace",
            hint="pip install 'xlacli[profile]'",
        )


def launch(logdir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    """Start TensorBoard in the background; fail clearly if it does not come up."""
    with log.open("wb") as handle:
        process = subprocess.Popen(
            tensorboard_command(logdir, port),
            stdout=handle,
            stderr=subprocess.STDOUT,
            # It stops with xlacli, however xlacli ends (SIGTERM, SIGKILL).
            preexec_fn=request_parent_death_signal,
        )
    try:
        _wait_until_serving(process, port, log)
    except BaseException:  # Ctrl-C while it starts: do not leave it running
        process.terminate()
        process.wait()
        raise
    return process


def _wait_until_serving(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CaptureError(
                f"TensorBoard exited with code {process.returncode}", hint=f"see {log}"
            )
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(("localhost", port)) == 0:
                return
        time.sleep(0.2)
    raise CaptureError("TensorBoard did not start within 60 s", hint=f"see {log}")
