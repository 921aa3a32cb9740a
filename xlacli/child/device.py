"""Starting the XLA device before the model runs (child process only).

torch_xla starts its runtime lazily, at the first ``torch_xla.device()``. A
device that cannot start (``PJRT_DEVICE=TPU`` without libtpu, a misspelled
device) raises there with torch_xla's own explanation; touching the runtime
again afterwards aborts the process, hiding that explanation. So the device
is started first, on its own, and its failure is reported as it was raised.
"""

from __future__ import annotations

import os
from typing import Any

from xlacli.errors import CaptureError


class DeviceStartError(CaptureError):
    """The XLA device could not start: an environment failure (exit 4)."""


def start_device() -> Any:
    """Start torch_xla's runtime and return the default XLA device.

    Raises:
        DeviceStartError: the runtime refused to start; carries torch_xla's message.
    """
    import torch_xla

    try:
        return torch_xla.device()
    except Exception as error:
        device = os.environ.get("PJRT_DEVICE", "(unset)")
        raise DeviceStartError(
            f"the XLA device PJRT_DEVICE={device} could not start: {type(error).__name__}: {error}",
            hint="set PJRT_DEVICE to a device this machine has (CPU, TPU, CUDA), "
            "with its runtime installed",
        ) from None
