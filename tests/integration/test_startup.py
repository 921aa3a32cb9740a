"""Commands that trace nothing must not import torch."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from xlacli.cli.main import main
code = main({argv!r})
assert code == {code}, code
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torch_xla', 'numpy'))
print(heavy)
"""


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--help"], 0),
        (["compile", "--help"], 0),
        (["--version"], 0),
        (["compile", "missing.py"], 2),
    ],
)
def test_no_torch_import(argv, code):
    completed = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, code=code)], capture_output=True, text=True
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip().splitlines()[-1] == "[]"
