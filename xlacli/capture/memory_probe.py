"""What the child samples per step for the memory and precision report (imports torch).

- Whether autocast was on while the step ran the user's modules: a global
  forward pre-hook reads ``torch.is_autocast_enabled(device_type)`` until it
  sees autocast on in the step (a flag check per module call while tracing;
  no TorchFunctionMode, which would see every op). Only the first
  ``SAMPLED_STEPS`` steps are watched: a global hook sends every module call
  through ``nn.Module``'s slow path, which the steps a profile measures must
  not pay; a training loop sets autocast the same way every step.
- The runtime's memory stats after the step, ``xm.get_memory_info``: on a TPU,
  bytes used, the peak and the limit; XLA:CPU has no allocator stats and
  raises, and the probe records what it said instead of a number.
"""

from __future__ import annotations

from typing import Any

import torch
import torch_xla.core.xla_model as xm

from xlacli.capture.failures import describe_exception

# Autocast on another device type than "xla" does not reach XLA tensors: say so.
AUTOCAST_DEVICE_TYPES = ("xla", "cpu", "cuda")
SAMPLED_STEPS = 2
_DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


class StepProbe:
    """Samples autocast during each step and the device's memory after it."""

    def __init__(self, device: torch.device | None = None) -> None:
        # None: the default XLA device, looked up after the first step (a
        # script creates it itself, after choosing its mode).
        self._device = device
        self._seen: list[str] = []
        self._memory_error_said = False
        self._steps_watched = 0
        self._handle: Any = torch.nn.modules.module.register_module_forward_pre_hook(self._look)

    def _look(self, module: torch.nn.Module, args: Any) -> None:
        if self._seen:
            return  # one sighting per step is enough
        for device_type in AUTOCAST_DEVICE_TYPES:
            if torch.is_autocast_enabled(device_type):
                dtype = torch.get_autocast_dtype(device_type)
                self._seen.append(f"{device_type}:{_DTYPE_NAMES.get(dtype, str(dtype))}")

    def step_facts(self) -> dict[str, Any]:
        """The step event's ``autocast`` and ``memory_info``; resets for the next step."""
        facts: dict[str, Any] = {}
        if self._handle is not None:  # watched: [] says "autocast was off"
            facts["autocast"] = self._seen
            self._seen = []
        self._steps_watched += 1
        if self._steps_watched == SAMPLED_STEPS:
            self.close()
        try:
            if self._device is None:
                import torch_xla

                self._device = torch_xla.device()
            info: Any = xm.get_memory_info(self._device)
            facts["memory_info"] = {
                str(k): int(v) for k, v in dict(info).items() if isinstance(v, (int, float))
            }
        except Exception as error:  # XLA:CPU: UNIMPLEMENTED: GetAllocatorStats...
            if not self._memory_error_said:
                facts["memory_info"] = describe_exception(error)
                self._memory_error_said = True
        return facts

    def close(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
