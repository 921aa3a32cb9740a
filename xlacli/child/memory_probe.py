"""What the child samples per step for the memory and precision report (imports torch).

- Whether autocast was on in the step: ``torch.autocast.__enter__`` notes
  each autocast the step enters (device type and dtype), and the state at the
  step's end catches one entered around the whole loop. Nothing runs per op
  or per module call, and no global module hook exists for Dynamo to guard
  on (removing one would recompile the user's compiled frames).
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
_DTYPE_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}


class StepProbe:
    """Sees autocast entered during each step and the device's memory after it."""

    def __init__(self, device: torch.device | None = None) -> None:
        # None: the default XLA device, looked up after the first step (a
        # script creates it itself, after choosing its mode).
        self._device = device
        self._seen: list[str] = []
        self._memory_error_said = False
        autocast = torch.amp.autocast_mode.autocast
        self._original_enter: Any = autocast.__enter__
        original, seen = self._original_enter, self._seen

        def enter(context: Any) -> Any:
            result = original(context)
            if getattr(context, "_enabled", False):
                seen.append(_autocast_name(context.device, context.fast_dtype))
            return result

        autocast.__enter__ = enter  # type: ignore[method-assign]

    def step_facts(self) -> dict[str, Any]:
        """The step event's ``autocast`` and ``memory_info``; resets for the next step."""
        # Autocast entered in the step, or still on at its end (entered around the loop).
        current = [
            _autocast_name(device_type, torch.get_autocast_dtype(device_type))
            for device_type in AUTOCAST_DEVICE_TYPES
            if torch.is_autocast_enabled(device_type)
        ]
        facts: dict[str, Any] = {"autocast": sorted({*self._seen, *current})}
        self._seen.clear()
        if self._memory_error_said:
            return facts  # the device has no memory stats: asking again raises again
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
        """Put ``torch.autocast.__enter__`` back."""
        torch.amp.autocast_mode.autocast.__enter__ = self._original_enter  # type: ignore[method-assign]


def _autocast_name(device_type: str, dtype: torch.dtype) -> str:
    return f"{device_type}:{_DTYPE_NAMES.get(dtype, str(dtype))}"
