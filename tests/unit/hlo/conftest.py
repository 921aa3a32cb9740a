"""Shared fixtures of the HLO unit tests: the golden files and a module using every feature."""

from __future__ import annotations

from pathlib import Path

import pytest

from xlacli.hlo import HloModule, parse_hlo

ASSETS = Path(__file__).resolve().parents[2] / "assets" / "hlo"
GOLDEN_FILES = sorted(ASSETS.glob("*_optimizations.txt"))

# Hand-written: every construct of the text format the parser claims to read.
FEATURES_HLO = (ASSETS / "features.txt").read_text()


@pytest.fixture(scope="session")
def features() -> HloModule:
    """The module using every construct."""
    return parse_hlo(FEATURES_HLO, "features.hlo")
