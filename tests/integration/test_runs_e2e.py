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


def test_a_report_rebuilt_after_the_graphs_were_filed_keeps_their_sizes(tmp_path):
    """xlacli stopped between filing the graphs' dumps under ``graphs/`` and
    writing ``report.json``: ``xlacli report`` rebuilds it from the filed copies
    (the raw dump folder is empty by then)."""
    run = tmp_path / "run"
    done = run_cli("compile", EXAMPLES / "mlp.py", "--steps", "2", "--out", run)
    assert done.code == 0, done.stderr
    written = json.loads((run / "report.json").read_text())
    assert not any((run / "raw" / "xla-dump").iterdir())
    (run / "report.json").unlink()
    shown = run_cli("report", run, "--format", "json")
    assert shown.code == 0, shown.stderr
    rebuilt = json.loads(shown.stdout)
    sizes = ("hlo_instructions", "optimized_hlo_instructions", "fusions", "temp_bytes", "files")
    assert [[graph[key] for key in sizes] for graph in rebuilt["graphs"]] == [
        [graph[key] for key in sizes] for graph in written["graphs"]
    ]
    assert all(graph["hlo_instructions"] for graph in rebuilt["graphs"])
