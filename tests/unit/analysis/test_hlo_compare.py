from xlacli.analysis.recompiles.hlo_compare import compare_hlo
from xlacli.hlo import parse_hlo

TEMPLATE = """HloModule m, entry_computation_layout={{(f32[4,8]{{1,0}})->f32[4,{width}]{{1,0}}}}

ENTRY %main (p0: f32[4,8]) -> f32[4,{width}] {{
  %p0 = f32[4,8]{{1,0}} parameter(0)
  %c = f32[] constant({constant}), metadata={{op_type="prim__Constant" source_file="/u/m.py" source_line=7}}
  %b = f32[4,8]{{1,0}} broadcast(%c), dimensions={{}}
  %m = f32[4,8]{{1,0}} multiply(%p0, %b)
  ROOT %s = f32[4,{width}]{{1,0}} slice(%m), slice={{[0:4], [{start}:{end}]}}
}}
"""


def module(constant="0", start=0, width=4):
    return parse_hlo(
        TEMPLATE.format(constant=constant, start=start, end=start + width, width=width)
    )


def test_identical():
    assert compare_hlo(module(), module()).kind == "none"


def test_constant_value():
    difference = compare_hlo(module("0"), module("1"))
    assert difference.kind == "constant"
    assert difference.detail == "constant f32[] 0 -> 1"
    assert difference.new is not None and difference.new.metadata.source_line == 7


def test_attribute():
    difference = compare_hlo(module(start=0), module(start=2))
    assert difference.kind == "attribute"
    assert "slice=" in difference.detail and "[2:6]" in difference.detail


def test_shape():
    assert compare_hlo(module(width=4), module(width=2)).kind == "shape"
