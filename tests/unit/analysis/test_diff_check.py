"""Every recompile's explanation held against its structural diff (issue 36)."""

from __future__ import annotations

from xlacli.analysis.recompiles.diff_check import checked_events, diff_facts, disagreement
from xlacli.hlo.diff import diff_modules
from xlacli.hlo.parser import parse_hlo
from xlacli.report.run_report import CompileCause, CompileEvent

STEP = """\
HloModule step

ENTRY main {{
  x = f32[{rows},16] parameter(0)
  w = f32[16,4] parameter(1)
  dot = f32[{rows},4] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  scale = f32[] constant({scale})
  b = f32[{rows},4] broadcast(scale), dimensions={{}}
  ROOT out = f32[{rows},4] multiply(dot, b){extra}
}}
"""


def _module(rows=8, scale="2", extra=""):
    return parse_hlo(STEP.format(rows=rows, scale=scale, extra=extra))


def _event(category: str) -> CompileEvent:
    cause = CompileCause(category, "/p/train.py:9", None, "the explainer's story")
    return CompileEvent(4, "new", 0.1, True, cause, compared_with="old")


def test_a_parameter_shape_is_an_input_shape_whatever_the_ir_said():
    modules = {"old": _module(rows=8), "new": _module(rows=12)}
    events, checks = checked_events([_event("graph_structure")], modules.get)
    [event], [check] = events, checks
    assert event.cause.category == "input_shape"
    assert "f32[8,16] -> f32[12,16]" in event.cause.detail
    assert event.cause.also[0].category == "graph_structure"  # the explainer's, kept beside
    assert (check.explained, check.diff) == ("graph_structure", "input_shape")


def test_a_constant_alone_is_a_constant_value():
    facts = diff_facts(diff_modules(_module(scale="2"), _module(scale="3")))
    assert facts.constants == 1 and not facts.parameters and not facts.added
    assert disagreement("input_shape", facts) == "constant_value"
    assert disagreement("constant_value", facts) is None


def test_an_agreeing_explanation_is_left_alone():
    modules = {"old": _module(rows=8), "new": _module(rows=12)}
    events, checks = checked_events([_event("input_shape")], modules.get)
    assert checks == () and events[0].cause.detail == "the explainer's story"


def test_categories_the_diff_cannot_judge_and_missing_modules_are_skipped():
    modules = {"old": _module(rows=8)}
    events, checks = checked_events([_event("graph_structure"), _event("sharding")], modules.get)
    assert checks == () and [e.cause.category for e in events] == ["graph_structure", "sharding"]


NO_INPUTS = """\
HloModule eager_expand

ENTRY main {{
  zero = f32[] constant(0)
  ROOT out = f32[{rows},16] broadcast(zero), dimensions={{}}
}}
"""


def test_a_graph_without_parameters_cannot_contradict_an_input_story():
    """An eager op on host data (the buffer ``.to(device)`` fills) has no
    parameter: the diff sees only its shapes change, not its input."""
    old, new = (parse_hlo(NO_INPUTS.format(rows=rows)) for rows in (4, 6))
    facts = diff_facts(diff_modules(old, new))
    assert not facts.has_parameters and facts.reshaped
    assert disagreement("input_shape", facts) is None
