"""The f64 warning names its line, and an optimizer's own f64 is expected (issue 27)."""

from __future__ import annotations

from xlacli.analysis.memory.precision import precision_warnings
from xlacli.report.memory import GraphPrecision, PrecisionMix


def _precision(*sources: str) -> GraphPrecision:
    mix = PrecisionMix(instructions={"f64": 2, "f32": 10})
    return GraphPrecision(requested=mix, optimized=None, f64_sources=sources)


def test_f64_inside_an_optimizer_is_expected():
    (warning,) = precision_warnings(_precision("/venv/site-packages/torch/optim/adam.py:537"))
    assert "inside torch/optim/adam.py:537" in warning and "expected, nothing to fix" in warning
    assert "leaked" not in warning


def test_f64_of_the_user_names_the_line():
    (warning,) = precision_warnings(
        _precision("/home/me/model.py:12", "/venv/site-packages/torch/optim/adam.py:537")
    )
    assert "at /home/me/model.py:12" in warning and "leaked in" in warning


def test_f64_without_a_source_still_warns():
    (warning,) = precision_warnings(_precision())
    assert warning.startswith("2 f64 instructions: a Python float")
