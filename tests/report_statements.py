"""Statements a text report makes, checked against the same report's JSON.

Each rule finds a statement in the text (a count, a "no compile after the
warm-up", an order) and says what the JSON must hold for it to be true. The
rules read the report's words, not its layout, so a new section or a moved
line does not break them; a new kind of statement adds a rule here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Rule:
    """A statement's pattern, and whether the JSON agrees with one match of it."""

    what: str
    pattern: re.Pattern[str]
    agrees: Callable[[Json, re.Match[str]], bool]


def _count(word: str) -> int:
    return 0 if word in ("no", "No") else int(word)


def _steady(data: Json) -> int:
    return sum(1 for event in data.get("events", []) if event.get("steady_state"))


def _dynamo_steady(data: Json) -> int:
    dynamo = data.get("dynamo") or {}
    warmup = data.get("warmup", 0)
    return sum(
        1
        for frame in dynamo.get("frames", [])
        if frame.get("guard_failure") and (frame.get("step") or 0) >= warmup
    )


_UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "K": 2**10, "M": 2**20}


def bytes_of(text: str) -> float:
    number, _, unit = text.partition(" ")
    return float(number) * _UNITS.get(unit.strip(), 1)


def _biggest_sorted(_: Json, match: re.Match[str]) -> bool:
    """Each listed buffer's size (``3 x f32[..] 64.0 KiB``: one buffer's), largest first."""
    sizes = [
        bytes_of(size)
        for size in re.findall(
            r"^\s+(?:\d+ x )?\S+\[[^\]]*\]\S* ([\d.]+ \w+)", match.group(1), re.M
        )
    ]
    return sizes == sorted(sizes, reverse=True)


RULES = (
    Rule(
        "the verdict's steady-state recompiles",
        re.compile(r"^(\d+) steady-state recompiles?:", re.M),
        lambda data, m: int(m.group(1)) == _steady(data),
    ),
    Rule(
        "no recompile after warm-up",
        re.compile(r"^no recompile after warm-up", re.M),
        lambda data, m: _steady(data) == 0 and _dynamo_steady(data) == 0 and not data.get("error"),
    ),
    Rule(
        "No compile after the warm-up steps",
        re.compile(r"No compile after the warm-up steps"),
        lambda data, m: _steady(data) == 0 and _dynamo_steady(data) == 0,
    ),
    Rule(
        "Steady-state recompiles (N)",
        re.compile(r"Steady-state recompiles \((\d+)\)"),
        lambda data, m: int(m.group(1)) == _steady(data),
    ),
    Rule(
        "Warm-up compiles (N",
        re.compile(r"Warm-up compiles \((\d+)"),
        # The loop's compiles only: a script's setup, new phases and after-the-loop
        # compiles have headings of their own (render/recompiles.py).
        lambda data, m: (
            int(m.group(1))
            == sum(
                1
                for e in data.get("events", [])
                if not e.get("steady_state") and e.get("phase", "loop") == "loop"
            )
        ),
    ),
    Rule(
        "N compilations",
        re.compile(r"^(\d+) compilations? \(", re.M),
        lambda data, m: int(m.group(1)) == data.get("compilations"),
    ),
    Rule(
        "N distinct graphs",
        re.compile(r"(\d+) distinct graphs?$", re.M),
        lambda data, m: int(m.group(1)) == len(data.get("graphs", [])),
    ),
    Rule(
        "N (training) steps in the title",
        re.compile(r"^xlacli compile .*?(\d+)(?: of \d+)? (training )?steps", re.M),
        lambda data, m: (
            # Training: what the steps did (a backward or an optimizer step), whoever
            # ran them; reports older than the field said it of --train alone.
            int(m.group(1)) == data.get("steps")
            and bool(m.group(2)) == bool(data.get("trained", data.get("train")))
        ),
    ),
    Rule(
        "the verdict says the run failed",
        re.compile(r"^failed \(exit (\d+)\)", re.M),
        lambda data, m: (data.get("error") or {}).get("exit_code") == int(m.group(1)),
    ),
    Rule(
        "Biggest buffers, largest first",
        re.compile(r"Biggest buffers[^\n]*\n((?:  .*\n)+)"),
        _biggest_sorted,
    ),
)


def contradictions(text: str, data: Json) -> list[str]:
    """The statements of ``text`` that ``data`` (its JSON) contradicts."""
    found = []
    for rule in RULES:
        for match in rule.pattern.finditer(text):
            if not rule.agrees(data, match):
                found.append(f"{rule.what}: {match.group(0).strip()!r}")
    if data.get("error") is None and _steady(data) and "no recompile" in text.lower():
        found.append("says no recompile, but the JSON has steady-state recompiles")
    return found


def wrapped_locations(text: str, data: Json) -> list[str]:
    """Locations of the JSON (file.py:line) that the text shows split across lines:
    the file's name is in the text, but never followed by its line."""
    locations = set(re.findall(r"([\w.\-]+\.py):(\d+)", str(data)))
    broken = []
    for name, line in locations:
        whole = f"{name}:{line}"
        if whole not in text and re.search(rf"{re.escape(name)}:?\s*\n\s*:?{line}\b", text):
            broken.append(whole)
    return broken
