"""Shared fixtures: where the test assets are."""

from __future__ import annotations

from pathlib import Path

import pytest

ASSETS = Path(__file__).resolve().parent / "assets"
GOLDEN = ASSETS / "golden"
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def golden() -> Path:
    return GOLDEN
