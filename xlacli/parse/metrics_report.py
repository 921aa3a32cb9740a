"""torch_xla's text metrics report (``torch_xla.debug.metrics.metrics_report()``).

Counters are exact integers; metrics carry a total sample count and an
accumulator, whose unit depends on the metric: times print as
``254ms543.671us``, sizes as ``1.28KB``, plain numbers as ``120.00``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COUNTER = re.compile(r"^Counter: (.+?)\s*$")
_METRIC = re.compile(r"^Metric: (.+?)\s*$")
_VALUE = re.compile(r"^\s+Value: (-?\d+)\s*$")
_SAMPLES = re.compile(r"^\s+TotalSamples: (\d+)\s*$")
_ACCUMULATOR = re.compile(r"^\s+Accumulator: (.+?)\s*$")
_TIME_PART = re.compile(r"(\d+(?:\.\d+)?)(d|h|m(?!s)|s|ms|us|ns)")
_TIME_UNITS_NS = {
    "d": 86400e9,
    "h": 3600e9,
    "m": 60e9,
    "s": 1e9,
    "ms": 1e6,
    "us": 1e3,
    "ns": 1.0,
}
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)(B|KB|MB|GB|TB|PB)$")
_SIZE_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "PB": 1 << 50}


@dataclass(frozen=True)
class MetricSummary:
    """A metric's total sample count and accumulated value (ns for times, bytes for sizes)."""

    total_samples: int
    accumulator: float


@dataclass(frozen=True)
class MetricsReport:
    """The counters and metrics of one report."""

    counters: dict[str, int]
    metrics: dict[str, MetricSummary]

    def counter(self, name: str) -> int:
        """A counter's value; 0 for a counter never bumped (torch_xla omits those)."""
        return self.counters.get(name, 0)

    def fallback_ops(self) -> dict[str, int]:
        """Ops that ran on the CPU through PyTorch: torch_xla's ``aten::*`` counters."""
        return {name: value for name, value in self.counters.items() if name.startswith("aten::")}


def parse_metrics_report(text: str) -> MetricsReport:
    """Parse a metrics report; a name seen twice keeps its last value."""
    counters: dict[str, int] = {}
    metrics: dict[str, MetricSummary] = {}
    name: str | None = None
    is_counter = False
    samples = 0
    for line in text.splitlines():
        if (match := _COUNTER.match(line)) is not None:
            name, is_counter = match.group(1), True
        elif (match := _METRIC.match(line)) is not None:
            name, is_counter, samples = match.group(1), False, 0
        elif name is None:
            continue
        elif is_counter and (match := _VALUE.match(line)) is not None:
            counters[name] = int(match.group(1))
        elif (match := _SAMPLES.match(line)) is not None:
            samples = int(match.group(1))
        elif (match := _ACCUMULATOR.match(line)) is not None:
            metrics[name] = MetricSummary(samples, parse_metric_value(match.group(1)))
    return MetricsReport(counters, metrics)


def parse_metric_value(text: str) -> float:
    """Parse ``254ms543.671us`` (to ns), ``1.28KB`` (to bytes) or ``120.00``."""
    text = text.strip()
    size = _SIZE.match(text)
    if size:
        return float(size.group(1)) * _SIZE_UNITS[size.group(2)]
    parts = _TIME_PART.findall(text)
    if parts and "".join(value + unit for value, unit in parts) == text:
        return _time_ns(parts)
    return float(text)


def _time_ns(parts: list[tuple[str, str]]) -> float:
    """Sum a printed time, undoing torch_xla's rounding of its leading parts.

    torch_xla prints each part but the last with ``setprecision(0)``, which
    rounds, then subtracts the floor: 89.66 ms prints as ``090ms657.668us``.
    A part whose true remainder is half a unit or more was rounded up.
    """
    rest_ns = 0.0
    for index, (value, unit) in enumerate(reversed(parts)):
        scale = _TIME_UNITS_NS[unit]
        printed = float(value)
        if index > 0 and rest_ns >= scale / 2:
            printed -= 1
        rest_ns += printed * scale
    return rest_ns
