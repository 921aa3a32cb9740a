"""Counts in words, for messages and reports."""

from __future__ import annotations


def counted(number: int, noun: str) -> str:
    """``counted(1, "graph")`` -> ``1 graph``; ``counted(2, "graph")`` -> ``2 graphs``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def type_words(kind: type) -> str:
    """``an integer``: a Python type as a message says it."""
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(
        kind, f"a {kind.__name__}"
    )
