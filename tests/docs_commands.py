"""The ``xlacli …`` commands README.md and docs/ show, as a test runs them.

Commands come from fenced blocks (a line starting with ``xlacli`` or ``$ xlacli``,
or after ``&&``; in a block with ``$`` prompts, only the prompted lines) and
from inline code spans. A command naming a placeholder (``MODEL``, ``RUN``,
``A B``, ``...``) or a file that exists nowhere is shown, not runnable; the
docs' stand-in ``model.py`` is a copy of examples/mlp.py, beside a
``pyproject.toml`` holding the docs' own ``[tool.xlacli]`` table.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COMMANDS = ("compile", "profile", "check", "report", "diff-hlo", "runs")
_INLINE = re.compile(r"`(xlacli [^`]+)`")
_PLACEHOLDER = re.compile(r"^\[?(?:[A-Z][A-Z_]*(?:\.py)?(?::[A-Z_]+)?|\.\.\.|…)\]?$")
# Options whose value is a file or folder the command writes.
_OUTPUTS = ("--out", "-o", "--output", "--junit", "--logdir")
# Profile step counts do not change what the command shows: cut to keep the test fast.
PROFILE_STEPS = 3
_REPO_FOLDERS = ("examples", "tests", "docs", "xlacli", "benchmarks")
# Stand-ins the docs name for the user's own files.
STAND_INS = {"model.py": REPO / "examples" / "mlp.py"}


@dataclass(frozen=True)
class DocCommand:
    """One command as printed, where it is printed, and the words to run."""

    text: str
    where: str  # file:line
    argv: tuple[str, ...]  # after "xlacli", as the test runs it

    @property
    def command(self) -> str:
        return self.argv[0] if self.argv else ""


def doc_files() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("**/*.md"))]


def shown_commands(files: list[Path] | None = None) -> list[DocCommand]:
    """Every ``xlacli COMMAND …`` printed in the docs, in order, first occurrence only."""
    found: dict[str, DocCommand] = {}
    for path in files or doc_files():
        for line_number, text in _commands_in(path.read_text(encoding="utf-8")):
            text = text.split(" # ")[0].split("  #")[0].strip()
            try:
                words = shlex.split(text)
            except ValueError:
                continue
            if len(words) < 2 or words[1] not in COMMANDS or text in found:
                continue
            where = f"{path.relative_to(REPO)}:{line_number}"
            found[text] = DocCommand(text, where, tuple(words[1:]))
    return list(found.values())


def _commands_in(markdown: str) -> list[tuple[int, str]]:
    commands: list[tuple[int, str]] = []
    block: list[tuple[int, str]] | None = None
    for number, line in enumerate(markdown.splitlines(), start=1):
        if line.strip().startswith("```"):
            if block is not None:
                commands += _block_commands(block)
            block = None if block is not None else []
            continue
        if block is not None:
            block.append((number, line))
        else:
            # `xlacli check` alone in prose names the command; with words, it is one.
            commands += [
                (number, match) for match in _INLINE.findall(line) if len(match.split()) > 2
            ]
    return commands


def _block_commands(block: list[tuple[int, str]]) -> list[tuple[int, str]]:
    prompted = any(line.lstrip().startswith("$ ") for _, line in block)
    commands = []
    for number, line in block:
        text = line.strip()
        if prompted:
            if not text.startswith("$ "):
                continue  # output
            text = text[2:]
        if "&& xlacli " in text:
            text = text[text.index("&& xlacli ") + 3 :]
        if text.startswith("xlacli "):
            commands.append((number, text))
    return commands


def why_not_runnable(command: DocCommand, cwd: Path) -> str | None:
    """Why a shown command cannot run as printed (a placeholder, a file that is
    nowhere, a server that would never end), or None."""
    argv = command.argv
    if "--tensorboard" in argv:
        return "serves TensorBoard until stopped"
    for index, word in enumerate(argv):
        if _PLACEHOLDER.match(word):
            return f"placeholder {word}"
        module = argv[index + 1] if word == "-m" and index + 1 < len(argv) else None
        if module and not (cwd / module.replace(".", "/")).with_suffix(".py").exists():
            return f"module {module} is an example name"
        if _is_path(word) and not _is_output(argv, index) and not (cwd / word).exists():
            if word.split("/")[0] in _REPO_FOLDERS:
                continue  # the repo's own file: run, and fail if the docs drifted
            if index == 0 or argv[index - 1] != "--":
                return f"{word} is the reader's own file"
    return None


def runnable_argv(command: DocCommand) -> tuple[str, ...]:
    """The words the test runs: as printed, with profile's step count cut."""
    argv = list(command.argv)
    if command.command == "profile" and "--steps" in argv:
        at = argv.index("--steps") + 1
        argv[at] = str(min(int(argv[at]), PROFILE_STEPS))
    return tuple(argv)


def _is_path(word: str) -> bool:
    if word.startswith("-") or "://" in word:
        return False
    return "/" in word or bool(re.search(r"\.(py|txt|json|pb|html|xml)(:\w+)?$", word))


def _is_output(argv: tuple[str, ...], index: int) -> bool:
    if index > 0 and argv[index - 1] in _OUTPUTS:
        return True
    # diff-hlo's inputs are what earlier commands wrote: they exist by then, or the
    # command is not runnable; --update-baseline writes its baseline.
    return index > 0 and argv[index - 1] == "--baseline" and "--update-baseline" in argv


def project_toml(files: list[Path] | None = None) -> str:
    """The first ``[tool.xlacli]`` table the docs show, as a pyproject.toml."""
    for path in files or doc_files():
        match = re.search(r"```toml\n(\[tool\.xlacli\].*?)```", path.read_text(), re.S)
        if match:
            return match.group(1)
    return ""
