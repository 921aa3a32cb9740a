"""The child's environment: torch_xla's and XLA's debug switches.

torch_xla reads these once, at import, which is why the model runs in a
child process whose environment is set before Python starts.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from xlacli.run_folder.request import CaptureRequest, RunPaths
from xlacli.run_folder.spawned import RANK_PLACEHOLDER, RankTemplate

# Deep enough to reach the user's frame through nn.Module and library calls.
DEBUG_MAX_FRAMES = 64
PROFILE_MAX_FRAMES = 16


def capture_environment(
    base: Mapping[str, str],
    request: CaptureRequest,
    paths: RunPaths,
    *,
    dump_dir: Path | None = None,
) -> dict[str, str]:
    """The environment for the child: ``base`` plus the switches the request needs.

    ``dump_dir`` is where XLA is told to dump (default: the run's own
    ``raw/xla-dump``); see ``flag_safe_dump_dir``.
    """
    env = dict(base)
    # torch_xla warns and picks CPU when PJRT_DEVICE is unset; say it.
    env.setdefault("PJRT_DEVICE", "CPU")
    env["PYTHONUNBUFFERED"] = "1"
    if request.devices is not None and env["PJRT_DEVICE"] == "CPU":
        # torch_xla 2.9 ignores XLA_FLAGS=--xla_force_host_platform_device_count;
        # its CPU client reads this instead. A TPU keeps its real devices.
        env["CPU_NUM_DEVICES"] = str(request.devices)
    if request.debug_artifacts:
        env.update(
            {
                # location=fn@file:line on IR nodes, source_file/line in HLO metadata.
                "XLA_IR_DEBUG": "1",
                "PT_XLA_DEBUG_LEVEL": "2",
                "PT_XLA_DEBUG_FILE": str(paths.debug_log),
                # Fewer frames in a profile: torch_xla formats them at every execution.
                "PT_XLA_DEBUG_MAX_FRAME": str(
                    PROFILE_MAX_FRAMES if request.profile_logdir else DEBUG_MAX_FRAMES
                ),
            }
        )
        env["XLA_FLAGS"] = _with_dump_flags(base.get("XLA_FLAGS", ""), dump_dir or paths.xla_dump)
    if request.debug_artifacts and request.profile_logdir is None:
        # More metadata in the HLO, at a cost in every step's tracing that a
        # profile must not pay (unlike XLA_IR_DEBUG, it cannot be turned off
        # once the graphs are compiled).
        env["XLA_HLO_DEBUG"] = "1"
    if request.debug_artifacts:
        # The protobuf dump keeps each op's whole Python stack (the text drops
        # it): how a change inside a library is traced to the user's call, and
        # a profile's ops to the user's lines. XLA_IR_DEBUG alone fills it for
        # the graphs compiled while frames are recorded; written once per compile.
        env["XLA_FLAGS"] += " --xla_dump_hlo_as_proto"
    if request.debug_artifacts and request.ir_per_sync:
        # Every sync's whole IR (~15-20 ms a step on a small training step):
        # short runs only; longer ones have the child write each new graph's
        # IR once (child/graph_ir.py).
        env.update(paths.native_ir_dump_environment())
    return env


def rank_template(
    base: Mapping[str, str], request: CaptureRequest, folder: Path, dump_dir: Path | None = None
) -> RankTemplate:
    """Where a process the script starts itself records (``run_folder/spawned.py``):
    ``folder`` (holding RANK_PLACEHOLDER), and the debug variables that name
    files, pointed there; XLA dumps into ``dump_dir`` (a staging folder,
    ``capture/dump_stage.py``) when given. The rest of the child's
    environment is inherited."""
    rank_paths = RunPaths(folder)
    env = capture_environment(base, request, rank_paths, dump_dir=dump_dir or rank_paths.xla_dump)
    named = {name: value for name, value in env.items() if RANK_PLACEHOLDER in value}
    return RankTemplate(str(folder), named)


def _with_dump_flags(xla_flags: str, dump_dir: Path) -> str:
    """The user's XLA_FLAGS with xlacli's dump folder (any other dump folder removed).

    XLA splits XLA_FLAGS on whitespace and knows no quoting: flags are joined
    as they are, and ``dump_dir`` must hold no space (``flag_safe_dump_dir``).
    """
    kept = [
        flag
        for flag in xla_flags.split()
        if not flag.startswith(("--xla_dump_to", "--xla_dump_hlo_as_text"))
    ]
    kept += [f"--xla_dump_to={dump_dir}", "--xla_dump_hlo_as_text"]
    return " ".join(kept)


_FLAG_SAFE = re.compile(r"[A-Za-z0-9_./+=@-]+")


def is_flag_safe(path: Path) -> bool:
    """Whether XLA_FLAGS can carry ``path`` as it is (no space, plain ASCII)."""
    return _FLAG_SAFE.fullmatch(str(path)) is not None


@contextlib.contextmanager
def flag_safe_dump_dir(paths: RunPaths) -> Iterator[Path]:
    """A path XLA_FLAGS can carry that leads to the run's dump folder.

    The run folder itself when its path is plain; otherwise (a space or a
    non-ASCII character anywhere in it) a symlink to it from a plain
    temporary folder, removed afterwards. XLA writes through the link, so
    the files land in the run folder as they are written, and a run cut
    short by SIGKILL keeps them too.
    """
    paths.xla_dump.mkdir(parents=True, exist_ok=True)
    if is_flag_safe(paths.xla_dump):
        yield paths.xla_dump
        return
    base = Path(tempfile.gettempdir())
    holder = Path(tempfile.mkdtemp(prefix="xlacli-", dir=base if is_flag_safe(base) else "/tmp"))
    link = holder / "xla-dump"
    link.symlink_to(paths.xla_dump, target_is_directory=True)
    try:
        yield link
    finally:
        link.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            holder.rmdir()
