"""The child is this xlacli's, whatever the working folder holds: a folder
named ``xlacli`` there (a checkout, another version) is not imported in its
place, while the user's code still finds the working folder's modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, REPO

pytestmark = pytest.mark.e2e


def test_a_folder_named_xlacli_in_the_working_folder_is_not_the_child(tmp_path):
    shadow = tmp_path / "xlacli" / "child"
    shadow.mkdir(parents=True)
    (tmp_path / "xlacli" / "__init__.py").write_text("raise ImportError('the wrong xlacli')\n")
    (shadow / "__init__.py").write_text("")
    (shadow / "child.py").write_text("raise SystemExit('the wrong child')\n")
    # The model imports a module of the working folder, as under `python -m`.
    (tmp_path / "helpers.py").write_text("WIDTH = 16\n")
    model = tmp_path / "model.py"
    model.write_text(
        (EXAMPLES / "mlp.py").read_text() + "\nfrom helpers import WIDTH  # noqa: E402\n"
    )
    # The parent as a console script starts it: not from the working folder (-P).
    env = {**os.environ, "PYTHONPATH": str(REPO), "PJRT_DEVICE": "CPU"}
    done = subprocess.run(
        [sys.executable, "-P", "-m", "xlacli", "compile", "model.py", "--steps", "2",
         "--out", "run", "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["steps"] == 2
