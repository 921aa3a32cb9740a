"""The loop a repeated line sits in: a loop over data, never a module's forward."""

from __future__ import annotations

from xlacli.analysis.recompiles.unrolled import loop_above

CODE = """\
class Stack(nn.Module):
    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def evaluate(model, loader):
    total = 0
    for batch in loader:
        if batch is not None:
            total += model(batch).sum()
    while total < 0:
        total = total + 1
    return total
"""


def _lines(_file):
    return CODE.splitlines()


def test_a_line_in_a_data_loop_names_the_loop():
    assert loop_above("/p/m.py:12", _lines) == "/p/m.py:10"  # under an if, in the for
    assert loop_above("/p/m.py:14", _lines) == "/p/m.py:13"


def test_layers_in_forward_and_lines_outside_loops_are_none():
    assert loop_above("/p/m.py:4", _lines) is None
    assert loop_above("/p/m.py:9", _lines) is None
    assert loop_above("/p/m.py:99", _lines) is None
