"""How much host time each step spends tracing torch ops onto XLA tensors
(child process only: imports torch_xla).

Every aten op torch dispatches to an XLA tensor runs under torch_xla's
``LazyTracing`` timer (with its ``xla::<op>`` counter): the timer's sample
count is the ops traced and its accumulated nanoseconds the time inside
torch's dispatch to XLA, the work lazy mode repeats every step and
``torch.compile`` or ``torch_xla.compile`` do once.

Only the profile's traced steps report it (the host timeline's row), so only
they read it: the timer's data comes with its 1,024 kept samples, a read
costs more than a small model's whole step.
"""

from __future__ import annotations

from typing import Any

import torch_xla.debug.metrics as met

LAZY_TRACING = "LazyTracing"


class OpTracingMeter:
    """The ops traced and their tracing time since the last call."""

    def __init__(self) -> None:
        self._count, self._total_ns = 0, 0.0

    def start(self) -> None:
        """A traced step starts: what is traced from here is its own."""
        self._count, self._total_ns = self._read()

    def delta(self) -> dict[str, Any]:
        """``{"op_tracing": {"ops": N, "time_ns": T}}``, or ``{}`` when no op was traced."""
        count, total_ns = self._read()
        ops, time_ns = count - self._count, total_ns - self._total_ns
        self._count, self._total_ns = count, total_ns
        if ops <= 0:
            return {}
        return {"op_tracing": {"ops": ops, "time_ns": max(time_ns, 0.0)}}

    @staticmethod
    def _read() -> tuple[int, float]:
        data = met.metric_data(LAZY_TRACING)
        if data is None:
            return 0, 0.0
        return int(data[0]), float(data[1])
