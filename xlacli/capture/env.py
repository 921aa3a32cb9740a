"""The child's environment: torch_xla's and XLA's debug switches.

torch_xla reads these once, at import, which is why the model runs in a
child process whose environment is set before Python starts.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from xlacli.capture.request import CaptureRequest, RunPaths

# Deep enough to reach the user's frame through nn.Module and library calls.
DEBUG_MAX_FRAMES = 64
PROFILE_MAX_FRAMES = 16


def capture_environment(
    base: Mapping[str, str], request: CaptureRequest, paths: RunPaths
) -> dict[str, str]:
    """The environment for the child: ``base`` plus the switches the request needs."""
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
        env["XLA_FLAGS"] = _with_dump_flags(base.get("XLA_FLAGS", ""), paths)
    if request.debug_artifacts and request.profile_logdir is None:
        # More metadata in the HLO, at a cost in every step's tracing that a
        # profile must not pay (unlike XLA_IR_DEBUG, it cannot be turned off
        # once the graphs are compiled).
        env["XLA_HLO_DEBUG"] = "1"
        # The protobuf dump keeps each op's whole Python stack (the text drops
        # it): how a change inside a library is traced to the user's call.
        env["XLA_FLAGS"] += " --xla_dump_hlo_as_proto"
    if request.debug_artifacts and request.ir_dump:
        # Writes each sync's IR as text: cheap for a few steps, not for a profile.
        env["XLA_SAVE_TENSORS_FILE"] = str(paths.ir_dump)
        env["XLA_SAVE_TENSORS_FMT"] = "text"
    return env


def _with_dump_flags(xla_flags: str, paths: RunPaths) -> str:
    """The user's XLA_FLAGS with xlacli's dump folder (any other dump folder removed)."""
    kept = [
        flag
        for flag in shlex.split(xla_flags)
        if not flag.startswith(("--xla_dump_to", "--xla_dump_hlo_as_text"))
    ]
    kept += [f"--xla_dump_to={paths.xla_dump}", "--xla_dump_hlo_as_text"]
    return " ".join(shlex.quote(flag) for flag in kept)
