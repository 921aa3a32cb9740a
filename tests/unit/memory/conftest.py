"""The memory goldens: real captures of tests/assets/models/memory/ (see make_goldens.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import GOLDEN
from xlacli.hlo import parse_hlo_file
from xlacli.hlo.model import HloModule

MEMORY_GOLDEN = GOLDEN / "memory"


def golden_text(variant: str, name: str) -> str:
    return (MEMORY_GOLDEN / variant / name).read_text(encoding="utf-8")


def golden_hlo(variant: str, stage: str) -> HloModule:
    return parse_hlo_file(MEMORY_GOLDEN / variant / f"hlo.{stage}.txt")


def golden_step_facts(variant: str) -> dict:
    return json.loads(golden_text(variant, "step-facts.json"))


def peak_entries(text: str) -> list[tuple[str, int]]:
    """The live set at the peak, read with a regex of the test's own."""
    block = text.split("(peak):\n", 1)[1].split("  Stack trace breakdown", 1)[0]
    return [(m[0], int(m[1])) for m in re.findall(r"^\s+(\S+): (\d+) bytes", block, re.M)]


@pytest.fixture
def golden_folder() -> Path:
    return MEMORY_GOLDEN
