"""A "Python branch" is named only where the code has one (issue 36, class 4)."""

from __future__ import annotations

from xlacli.analysis.recompiles.hints import branch_above

CODE = """\
def step(model, batch, step):
    out = model(batch)
    if step % 4 == 0:
        out = out * 2
        out = out + 1
    else:
        out = out - 1
    total = out.sum()
    scaled = total * 2 if step else total
    for _ in range(step):
        total = total + 1
    return total
"""


def test_lines_inside_a_branch_or_with_one_have_it(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(CODE)
    assert branch_above(f"{path}:4") and branch_above(f"{path}:5")  # under the if
    assert branch_above(f"{path}:7")  # under the else
    assert branch_above(f"{path}:9")  # a conditional expression
    assert branch_above(f"{path}:3")  # the if itself


def test_lines_outside_every_branch_have_none(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(CODE)
    assert not branch_above(f"{path}:2")
    assert not branch_above(f"{path}:8")
    assert not branch_above(f"{path}:11")  # a loop whose count changes is no branch


def test_an_unreadable_file_assumes_a_branch(tmp_path):
    assert branch_above(f"{tmp_path}/gone.py:3")
