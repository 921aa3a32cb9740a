"""Numbers, counts and types as people read them."""

from __future__ import annotations

_BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
_SHORT_HASH = 8


def short_hash(graph_hash: str | None) -> str:
    """A graph's hash as every view shows it: its first 8 characters."""
    return (graph_hash or "")[:_SHORT_HASH]


def format_bytes(value: int | None) -> str:
    """``3544`` -> ``3.5 KiB``; None -> ``-``."""
    if value is None:
        return "-"
    size = float(value)
    for unit in _BYTE_UNITS:
        if abs(size) < 1024 or unit == _BYTE_UNITS[-1]:
            return f"{int(size)} {unit}" if unit == "B" else f"{_three_digits(size)} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def format_seconds(value: float | None) -> str:
    """Seconds with a unit that keeps 2-3 significant digits; None -> ``-``."""
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:.0f} s"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{_three_digits(value * 1e3)} ms"
    return f"{_three_digits(value * 1e6)} µs"


def _three_digits(value: float) -> str:
    """About three significant digits, never in scientific notation: 1.23, 12.3, 123, 1023."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def format_age(seconds: float) -> str:
    """``45 s``, ``12 min``, ``3 h``, ``2 d``."""
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size:.0f} {unit}"
    return f"{seconds:.0f} s"


def counted(number: int, noun: str) -> str:
    """``counted(1, "graph")`` -> ``1 graph``; ``counted(2, "graph")`` -> ``2 graphs``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def type_words(kind: type) -> str:
    """``an integer``: a Python type as a message says it."""
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(
        kind, f"a {kind.__name__}"
    )
