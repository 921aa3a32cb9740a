"""The command that made a run, kept in its request, names it in ``xlacli runs``
and in its report's title (issue 38: ``check --update-baseline`` was listed as
``compile``): the capture every command shares, asked as ``check`` asks."""

from __future__ import annotations

import json

import pytest

from tests.conftest import EXAMPLES, run_cli

pytestmark = pytest.mark.e2e


def test_a_run_made_for_check_is_a_check_run(tmp_path):
    from xlacli.flows.session import capture, resolve_target
    from xlacli.run_options import RunOptions

    runs = tmp_path / ".xlacli" / "runs"
    target = resolve_target(str(EXAMPLES / "mlp.py"))
    options = RunOptions(steps=1, warmup=0, train=False, optimizer="sgd", mode="lazy")
    result = capture(target, options, command="check", runs_dir=runs)
    assert result.error is None
    assert json.loads((result.paths.root / "request.json").read_text())["command"] == "check"
    assert result.report.command == "check"
    listed = run_cli("runs", cwd=tmp_path)
    assert listed.code == 0, listed.stderr
    (row,) = [line for line in listed.stdout.splitlines() if result.paths.root.name in line]
    assert row.split()[1] == "check"
    shown = run_cli("report", cwd=tmp_path)
    assert "xlacli check " in shown.stdout.splitlines()[1]
