"""How the caller gave a compiled function a guarded value (analysis/dynamo/guard_callers.py)."""

from __future__ import annotations

from xlacli.analysis.dynamo.guard_callers import PassedValue, passed_value
from xlacli.parse.frames import Frame

SOURCE = """\
import torch


def scaled(x, scale, *, bias=0.0):
    return x * scale + bias


class Block:
    def forward(self, x):
        return x + 1


def main(block):
    scale = 1.0
    for step in range(4):
        scale = 0.5 if step >= 2 else 1.0
        x = torch.randn(4 + step, 16)
        scaled(x, scale, bias=step * 0.1)
        scaled(x, 2.0)
        block.forward(x)

    def inner(x):
        return x * scale

    for scale in (1.0, 2.0):
        inner(torch.ones(2))
"""


def write(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SOURCE)
    return str(path)


def test_a_passed_variable_is_named_with_its_assignment_in_the_loop(tmp_path):
    file = write(tmp_path)
    call = Frame("main", file, 18)
    assert passed_value(f"{file}:4", "scale", call) == PassedValue(
        "scale", (f"{file}:16",), f"{file}:18"
    )
    assert passed_value(f"{file}:4", "x", call) == PassedValue("x", (f"{file}:17",), f"{file}:18")


def test_a_keyword_and_a_literal_are_passed_at_the_call_only(tmp_path):
    file = write(tmp_path)
    assert passed_value(f"{file}:4", "bias", Frame("main", file, 18)) == PassedValue(
        None, (), f"{file}:18"
    )
    assert passed_value(f"{file}:4", "scale", Frame("main", file, 19)) == PassedValue(
        None, (), f"{file}:19"
    )


def test_a_method_skips_self(tmp_path):
    file = write(tmp_path)
    assert passed_value(f"{file}:9", "x", Frame("main", file, 20)) == PassedValue(
        "x", (f"{file}:17",), f"{file}:20"
    )


def test_an_item_of_star_args_is_the_calls_positional_argument(tmp_path):
    wrapper = tmp_path / "wrapper.py"
    wrapper.write_text("def inner(*args, **kwargs):\n    return args\n")
    file = write(tmp_path)
    passed = passed_value(f"{wrapper}:1", "args", Frame("main", file, 18), 1)
    assert passed == PassedValue("scale", (f"{file}:16",), f"{file}:18")
    assert passed_value(f"{wrapper}:1", "args", Frame("main", file, 18)) == PassedValue(
        None, (), f"{file}:18"
    )


def test_a_closure_is_assigned_in_the_enclosing_function(tmp_path):
    file = write(tmp_path)
    passed = passed_value(f"{file}:22", "scale", Frame("main", file, 26))
    assert passed == PassedValue("scale", (f"{file}:25",), None)


def test_no_source_no_answer(tmp_path):
    file = write(tmp_path)
    assert passed_value(f"{tmp_path}/missing.py:4", "x", Frame("main", file, 18)) is None
    assert passed_value(f"{file}:4", "x", None) is None
