"""``xlacli check`` as a team's CI gate, on a training script written afresh (issue 34).

The script has the shapes teams write: a sync per step, an evaluation loop each
epoch with its own sync, ``drop_last``, a step closure that logs every k steps,
AdamW. Its baseline is recorded once; each test edits a copy the way a pull
request would and runs the gate with every CI output (``--github``, ``--junit``,
``$GITHUB_STEP_SUMMARY``). A regression exits 1 naming the user's line of the
change; an unchanged or merely moved script exits 0; one added graph is one
changed graph, not a cascade; a bug inside xlacli still writes every output and
exits 5, without our traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.conftest import CliResult, assert_clean_error, package_files_in, run_cli

pytestmark = pytest.mark.e2e

SCRIPT = '''\
"""A team's training script, written the way tutorials write them."""

import torch
import torch_xla
import torch_xla.core.xla_model as xm
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 2
LOG_EVERY = 4


def make_data(samples, seed):
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(samples, 12, generator=generator)
    labels = torch.randint(0, 3, (samples,), generator=generator)
    return TensorDataset(features, labels)


def evaluate(model, loader, device):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=device)
    with torch.no_grad():
        for features, labels in loader:
            features, labels = features.to(device), labels.to(device)
            correct += model(features).argmax(dim=1).eq(labels).sum()
            torch_xla.sync()
    return correct


def main():
    torch.manual_seed(0)
    device = torch_xla.device()
    model = nn.Sequential(nn.Linear(12, 24), nn.GELU(), nn.Linear(24, 3)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_loader = DataLoader(make_data(64, 0), batch_size=8, drop_last=True)
    eval_loader = DataLoader(make_data(32, 1), batch_size=8)
    step = 0
    for epoch in range(EPOCHS):
        model.train()
        for features, labels in train_loader:
            features, labels = features.to(device), labels.to(device)
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(features), labels)
            loss.backward()
            optimizer.step()
            step += 1
            if step % LOG_EVERY == 0:
                grad_norm = torch.stack([p.grad.norm() for p in model.parameters()]).norm()
                xm.add_step_closure(
                    lambda s=step, l=loss, g=grad_norm: print(s, l.item(), g.item())
                )
            torch_xla.sync()
        correct = evaluate(model, eval_loader, device)
        print(f"epoch {epoch}: accuracy {correct.item() / 32:.3f}")


if __name__ == "__main__":
    main()
'''
CONFIG = '[tool.xlacli]\nmodel = "train.py"\nbaseline = "ci/baseline.json"\n'


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project with its baseline recorded and committed, as a team has it."""
    project = tmp_path_factory.mktemp("gate") / "project"
    project.mkdir()
    (project / "train.py").write_text(SCRIPT)
    (project / "pyproject.toml").write_text(CONFIG)
    result = run_cli("check", "--update-baseline", cwd=project)
    assert result.code == 0, result.stderr
    return project


@dataclass(frozen=True)
class Gate:
    """One run of the gate with every CI output."""

    project: Path
    result: CliResult

    @property
    def junit(self) -> ElementTree.Element:
        return ElementTree.parse(self.project / "junit.xml").getroot()

    @property
    def summary(self) -> str:
        return (self.project / "summary.md").read_text()

    @property
    def check_json(self) -> dict:
        runs = sorted(
            (self.project / ".xlacli" / "runs").iterdir(), key=lambda p: p.stat().st_mtime
        )
        return json.loads((runs[-1] / "check.json").read_text())

    def rows(self, status: str) -> list[dict]:
        return [row for row in self.check_json["checks"] if row["status"] == status]


def _copy(recorded: Path, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(recorded, project, ignore=shutil.ignore_patterns(".xlacli"))
    return project


def _edit(project: Path, old: str, new: str) -> None:
    path = project / "train.py"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _line(project: Path, fragment: str, *, last: bool = False) -> int:
    """The first (or last) line of the script holding ``fragment``."""
    lines = (project / "train.py").read_text().splitlines()
    found = [number for number, line in enumerate(lines, 1) if fragment in line]
    return found[-1] if last else found[0]


def _gate(project: Path) -> Gate:
    result = run_cli(
        "check",
        "--github",
        "--junit",
        "junit.xml",
        cwd=project,
        env={"GITHUB_STEP_SUMMARY": str(project / "summary.md")},
    )
    assert "Traceback" not in result.stderr and not package_files_in(result.stderr, project)
    return Gate(project, result)


def _assert_regression(gate: Gate, line: int) -> None:
    """Exit 1, the user's line in the table's explanation and in an annotation,
    a failing JUnit case, and the step summary."""
    assert gate.result.code == 1, gate.result.stderr
    assert f"train.py:{line}" in gate.result.stdout, gate.result.stdout
    assert f"::error file=train.py,line={line}," in gate.result.stdout, gate.result.stdout
    assert gate.junit.get("failures") != "0"
    assert gate.junit.find(".//failure") is not None
    assert "regressed" in gate.summary


def test_an_unchanged_rerun_passes(recorded, tmp_path):
    gate = _gate(_copy(recorded, tmp_path))
    assert gate.result.code == 0, gate.result.stdout + gate.result.stderr
    assert gate.result.stdout.startswith("passed: all")
    assert gate.junit.get("failures") == "0" and "::error" not in gate.result.stdout


def test_code_moved_down_ten_lines_is_no_change(recorded, tmp_path):
    project = _copy(recorded, tmp_path)
    _edit(project, "EPOCHS = 2\n", "EPOCHS = 2\n" + "# a note the team added\n" * 10)
    gate = _gate(project)
    assert gate.result.code == 0, gate.result.stdout
    assert "lines grew" not in gate.result.stdout


def test_gradient_clipping_with_a_branch_on_the_norm(recorded, tmp_path):
    """The crash of issue 34: a read of the norm inside the step. The new graph is
    explained at the branch, the step's graph shrinks or grows in place."""
    project = _copy(recorded, tmp_path)
    _edit(
        project,
        "            optimizer.step()\n",
        "            grad_total = nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "            if grad_total > 100:\n"
        '                print("exploding gradients")\n'
        "            optimizer.step()\n",
    )
    gate = _gate(project)
    _assert_regression(gate, _line(project, "if grad_total > 100:"))
    assert "host_sync" in gate.result.stdout
    new = [row for row in gate.rows("regression") if row["detail"].startswith("new graph")]
    assert len(new) == 1 and "if grad_total > 100:" in new[0]["name"], new
    # Nothing about the evaluation loop changed.
    assert not [row for row in gate.rows("regression") if "evaluate" in row["name"]]


def test_a_short_last_batch(recorded, tmp_path):
    project = _copy(recorded, tmp_path)
    _edit(
        project, "make_data(64, 0), batch_size=8, drop_last=True", "make_data(60, 0), batch_size=8"
    )
    gate = _gate(project)
    # The batch moved to the device in the training loop (the evaluation's is first).
    _assert_regression(gate, _line(project, "features, labels = features.to(", last=True))
    steady = next(row for row in gate.check_json["checks"] if row["name"].startswith("steady"))
    assert steady["status"] == "regression", steady
    assert "input_shape" in gate.result.stdout


def test_reading_the_loss_every_step(recorded, tmp_path):
    project = _copy(recorded, tmp_path)
    _edit(
        project,
        "            step += 1\n",
        '            step += 1\n            print(f"loss {loss.item():.3f}")\n',
    )
    gate = _gate(project)
    _assert_regression(gate, _line(project, 'print(f"loss {loss.item()'))
    executions = next(r for r in gate.check_json["checks"] if r["name"] == "executions per step")
    assert executions["status"] == "regression" and "1 -> 2" in executions["detail"]


def test_a_change_in_the_evaluation_loop_is_that_graph_alone(recorded, tmp_path):
    project = _copy(recorded, tmp_path)
    _edit(project, "model(features).argmax(dim=1)", "model(features).softmax(dim=1).argmax(dim=1)")
    gate = _gate(project)
    assert gate.result.code == 1
    graph_rows = [
        row
        for row in gate.check_json["checks"]
        if row["name"].startswith(("HLO instructions", "peak memory")) and row["status"] != "ok"
    ]
    assert graph_rows and all("evaluate" in row["name"] for row in graph_rows), graph_rows
    assert f"train.py:{_line(project, 'softmax(dim=1)')}" in gate.result.stdout


def test_one_added_graph_is_one_change(recorded, tmp_path):
    """A five-graph baseline and one graph added before the others: one new graph,
    no other graph changed (they used to be paired by order: six regressions)."""
    baseline = json.loads((recorded / "ci" / "baseline.json").read_text())
    assert len(baseline["graphs"]) == 5, baseline["graphs"]
    project = _copy(recorded, tmp_path)
    _edit(
        project,
        "    step = 0\n",
        "    initial_norm = sum(p.norm() for p in model.parameters())\n"
        "    torch_xla.sync()\n"
        "    step = 0\n",
    )
    gate = _gate(project)
    assert gate.result.code == 1
    changed = [
        row
        for row in gate.check_json["checks"]
        if row["name"].startswith(("HLO instructions", "peak memory", "collectives"))
        and row["status"] != "ok"
    ]
    assert len(changed) == 1 and changed[0]["detail"].startswith("new graph"), changed
    # The expected compile of the optimizer state is not among those "behind it".
    assert all(c["cause"]["category"] != "optimizer_state" for c in gate.check_json["compiles"])
    annotations = [line for line in gate.result.stdout.splitlines() if line.startswith("::error")]
    assert not [a for a in annotations if "peak memory" in a or "evaluate" in a], annotations


_FAULT = """
import sys
import xlacli.{module} as target

def broken(*args, **kwargs):
    raise RuntimeError("an injected bug")

target.{name} = broken
from xlacli.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("module", "name"),
    [("flows.check", "compare"), ("cli.check", "_show_check")],
    ids=["while-comparing", "while-showing"],
)
def test_a_bug_in_xlacli_still_tells_ci(recorded, tmp_path, module, name):
    """A bug (injected here: our code raising) is one line, exit 5, and every CI
    output says so: JUnit's <error>, an annotation, the summary, check.json."""
    project = _copy(recorded, tmp_path)
    command = [sys.executable, "-c", _FAULT.format(module=module, name=name), "check"]
    completed = subprocess.run(
        [*command, "--github", "--junit", "junit.xml"],
        cwd=project,
        capture_output=True,
        text=True,
        env={**os.environ, "GITHUB_STEP_SUMMARY": str(project / "summary.md")},
        timeout=300,
    )
    result = CliResult(completed.returncode, completed.stdout, completed.stderr, project)
    assert_clean_error(result, 5, "an injected bug", "a bug in xlacli")
    assert "Traceback" not in result.stderr
    gate = Gate(project, result)
    assert gate.junit.find(".//error") is not None
    assert "an injected bug" in gate.junit.find(".//error").get("message")
    assert "::error" in result.stdout and "an injected bug" in result.stdout
    assert "exit 5" in gate.summary
    assert gate.check_json["error"]["exit_code"] == 5
    assert not gate.check_json["passed"]
