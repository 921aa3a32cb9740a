"""Every ``xlacli …`` command README.md and docs/ show runs as printed (issue 27).

Commands run in document order in one working folder (so ``diff-hlo runs/plain
runs/ckpt`` finds the runs the lines before it made), each once; profile step
counts are cut to a few (they do not change what is shown). What cannot run as
printed (a placeholder, the reader's own file) is listed by
``test_what_is_not_run_is_only_placeholders``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO, CliResult, run_cli
from tests.docs_commands import (
    STAND_INS,
    DocCommand,
    project_toml,
    runnable_argv,
    shown_commands,
    why_not_runnable,
)

pytestmark = pytest.mark.e2e

SHOWN = shown_commands()
# Commands that may exit 1 as printed: a diff that finds differences, a budget.
MAY_FAIL_CHECK = ("diff-hlo", "--max-compiles", "--fail-on-recompile")


class DocRunner:
    """Runs the shown commands in order in one folder, each once."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.results: dict[str, CliResult | str] = {}
        for name in ("examples", "tests", "docs"):
            (folder / name).symlink_to(REPO / name)
        for name, source in STAND_INS.items():
            (folder / name).write_text(source.read_text())
        (folder / "pyproject.toml").write_text(project_toml())

    def result(self, command: DocCommand) -> CliResult | str:
        """The command's result (or why it was not run), running those before it first."""
        for earlier in SHOWN[: SHOWN.index(command) + 1]:
            if earlier.text not in self.results:
                reason = why_not_runnable(earlier, self.folder)
                self.results[earlier.text] = reason or run_cli(
                    *runnable_argv(earlier), cwd=self.folder, timeout=900
                )
        return self.results[command.text]


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> DocRunner:
    return DocRunner(tmp_path_factory.mktemp("docs"))


def test_the_docs_show_commands():
    assert len(SHOWN) >= 20, [c.text for c in SHOWN]


@pytest.mark.parametrize("command", SHOWN, ids=[c.where for c in SHOWN])
def test_a_shown_command_runs_as_printed(runner, command):
    result = runner.result(command)
    if isinstance(result, str):
        pytest.skip(f"not runnable as printed: {result}")
    allowed = {0, 1} if any(word in command.argv for word in MAY_FAIL_CHECK) else {0}
    assert result.code in allowed, (command.where, command.text, result.stderr[-2000:])
    assert "Traceback" not in result.stderr


def test_what_is_not_run_is_only_placeholders(runner):
    for command in SHOWN:
        runner.result(command)
    not_run = {text: why for text, why in runner.results.items() if isinstance(why, str)}
    run = len(runner.results) - len(not_run)
    assert run >= 15, not_run
    allowed = ("placeholder", "the reader's own file", "an example name", "serves TensorBoard")
    assert all(any(reason in why for reason in allowed) for why in not_run.values()), not_run
