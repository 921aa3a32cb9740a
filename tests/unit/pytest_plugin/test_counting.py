"""A test's compile count when the test clears torch_xla's counters itself."""

from __future__ import annotations

import pytest


def test_count_restarts_at_a_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    in_process = pytest.importorskip("xlacli.child.in_process")
    counter = {"UncachedCompile": 7}
    monkeypatch.setattr(in_process.met, "counter_value", counter.get)
    assert in_process.compiles_since(5) == 2
    counter["UncachedCompile"] = 1  # met.clear_all(), then one compile
    assert in_process.compiles_since(5) == 1
