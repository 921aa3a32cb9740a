"""The README a newcomer reads in five minutes (issue 38), and links that lead
somewhere: every relative link of README.md and docs/ names a file that exists,
and an anchor names one of its headings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs_commands import REPO, doc_files

README = REPO / "README.md"
MAX_LINES = 120  # well under the 150 the issue allows
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)


def _blocks(text: str) -> list[str]:
    return list(_FENCE.findall(text))


def test_the_readme_fits_on_a_few_screens():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= MAX_LINES, len(lines)


def test_the_readme_sets_up_in_a_venv_and_installs_once_for_the_main_command():
    blocks = _blocks(README.read_text(encoding="utf-8"))
    quickstart = blocks[0].splitlines()[1:-1]
    assert "-m venv" in quickstart[0] and "activate" in quickstart[0]
    # One install, no extras, then the main command: the test extras are not needed to run it.
    assert quickstart[1] == "pip install -e . && xlacli compile examples/mlp.py"
    # The other set-up line installs what the tests need and runs them.
    development = blocks[-1].splitlines()[1:-1]
    assert development == ["pip install -e '.[dev]' && pytest -n 2"]


def test_the_readme_explains_the_output_it_shows():
    text = README.read_text(encoding="utf-8")
    assert "$ xlacli compile examples/mlp.py\nno recompile after warm-up" in text
    for said in ("verdict", "One row per distinct graph", "run folder", "next command"):
        assert said in text, said


def test_the_commands_table_names_every_command_and_its_page():
    text = README.read_text(encoding="utf-8")
    for command in ("compile", "profile", "check", "report", "runs", "diff-hlo"):
        assert f"| `xlacli {command}" in text, command


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def _links() -> list[tuple[Path, str]]:
    found = []
    for path in doc_files():
        text = _FENCE.sub("", path.read_text(encoding="utf-8"))
        for target in _LINK.findall(text):
            if "://" not in target and not target.startswith("mailto:"):
                found.append((path, target))
    return found


@pytest.mark.parametrize(("page", "target"), _links(), ids=[f"{p.name}->{t}" for p, t in _links()])
def test_every_relative_link_leads_somewhere(page, target):
    file, _, anchor = target.partition("#")
    linked = (page.parent / file).resolve() if file else page
    assert linked.exists(), f"{page.relative_to(REPO)} links to {target}: no such file"
    if anchor and linked.suffix == ".md":
        assert anchor in _anchors(linked), f"{page.relative_to(REPO)}: no heading #{anchor}"
