"""Counts in words, for messages and reports."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """``counted(1, "graph")`` -> ``1 graph``; ``counted(2, "graph")`` -> ``2 graphs``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"
