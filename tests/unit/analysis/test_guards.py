"""Where a failed Dynamo guard's value was read and changed (analysis/dynamo/guards.py)."""

from __future__ import annotations

from xlacli.analysis.dynamo.guards import (
    GuardedValue,
    assignment_lines,
    first_read_line,
    guard_read_location,
    guarded_value,
)

ATTRIBUTE = (
    "0/0: self.scale == 1.0                                        "
    "# return h * self.scale  # wt/i21/proj/model.py:29 in forward"
)
GLOBAL = "0/0: G['SCALE'] == 1.0     # return x * SCALE  # mp/i21/gl.py:5 in f"


def test_the_note_names_the_line_that_read_the_value():
    files = ["/work/wt/i21/proj/model.py", "/work/wt/i21/proj/other.py"]
    assert guard_read_location(ATTRIBUTE, files) == "/work/wt/i21/proj/model.py:29"


def test_a_note_matching_no_user_file_is_no_location():
    assert guard_read_location(ATTRIBUTE, ["/elsewhere/model.py"]) is None
    assert guard_read_location("0/0: tensor 'x' size mismatch at index 0", []) is None
    assert guard_read_location(None, []) is None


def test_the_guarded_value_of_an_attribute_a_global_and_an_argument():
    assert guarded_value(ATTRIBUTE) == GuardedValue("scale", "attribute")
    assert guarded_value(GLOBAL) == GuardedValue("SCALE", "global")
    argument = GuardedValue("x", "argument")
    assert guarded_value("0/0: tensor 'x' size mismatch at index 0. expected 4") == argument
    assert guarded_value("0/1: x.size()[0] <= 8") == argument
    assert guarded_value("0/0: L['n'] == 3") == GuardedValue("n", "argument")
    assert guarded_value("0/0: scale == 1.0  # return h * scale  # m.py:9 in f") == (
        GuardedValue("scale", "argument")
    )
    assert guarded_value("0/0: ___check_type_id(scale, 9439136)") == GuardedValue(
        "scale", "argument"
    )
    assert guarded_value("0/0: tensor 'args[0]' size mismatch at index 0") == GuardedValue(
        "args", "argument", 0
    )
    assert guarded_value("0/0: ___stack0 == 3") is None  # Dynamo's own name
    assert guarded_value("0/1: 2 <= x.size()[0]") is None
    assert guarded_value(None) is None


SOURCE = """\
SCALE = 1.0


class M:
    def __init__(self):
        self.scale = 1.0

    def forward(self, x):
        return x * self.scale


def main(model):
    global SCALE
    for step in range(4):
        if step == 2:
            model.scale = 0.5
            SCALE = 2.0
"""


def test_assignments_outside_init_are_the_changes(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    assert assignment_lines(str(path), "scale", is_global=False) == (16,)
    assert assignment_lines(str(path), "SCALE", is_global=True) == (17,)
    assert assignment_lines(str(tmp_path / "missing.py"), "scale", is_global=False) == ()


def test_the_first_read_of_an_argument(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SOURCE)
    x = GuardedValue("x", "argument")
    assert first_read_line(str(path), 8, x) == 9  # forward(self, x): return x * ...
    assert first_read_line(str(path), 8, GuardedValue("scale", "attribute")) == 9
    assert first_read_line(str(path), 8, GuardedValue("missing", "global")) is None
    assert first_read_line(str(path), 3, x) is None  # no def at that line
