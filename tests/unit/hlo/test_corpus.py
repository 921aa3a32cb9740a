"""OpenXLA's own test corpus: every module XLA parses parses here, prints back and diffs clean.

The corpus lives beside the repository (``../shared/hlo-corpus``, or the
folder named by ``XLACLI_HLO_CORPUS``) and is read in place, never copied.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import pytest
from hlo_transforms import renumber, reorder

from xlacli.errors import HloParseError
from xlacli.hlo import parse_hlo, print_module
from xlacli.hlo.diff import diff_modules

CORPUS = Path(
    os.environ.get(
        "XLACLI_HLO_CORPUS", Path(__file__).resolve().parents[3].parent / "shared" / "hlo-corpus"
    )
)
VALID = ("a_valid", "a_valid_nonroundtrip_input", "b_split", "c_valid", "c_valid_headerless")

pytestmark = pytest.mark.skipif(
    not CORPUS.is_dir(),
    reason=f"the HLO corpus is not at {CORPUS} (set XLACLI_HLO_CORPUS to its folder)",
)


def _files(folder: str) -> list[Path]:
    return sorted((CORPUS / folder).glob("*.hlo")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("folder", VALID)
def test_every_valid_module_parses_round_trips_and_diffs_identical(folder: str) -> None:
    problems = []
    files = _files(folder)  # b_split holds three HloModuleProto in protobuf text format
    assert files
    for path in files:
        try:
            module = parse_hlo(path.read_text(), str(path))
        except HloParseError as error:
            problems.append(str(error))
            continue
        again = parse_hlo(print_module(module), str(path))
        if again != module:
            problems.append(f"{path.name}: printed and parsed again, the module differs")
        if not diff_modules(module, module).identical:
            problems.append(f"{path.name}: differs from itself")
        renamed = reorder(renumber(module, seed=1), seed=2)
        if not diff_modules(module, renamed).identical:
            problems.append(f"{path.name}: differs from a renamed and reordered copy")
    assert not problems, "\n".join(problems[:20]) + f"\n({len(problems)} problems)"


def test_every_invalid_module_parses_or_raises_a_parse_error() -> None:
    files = _files("a_invalid")
    assert files
    for path in files:
        with contextlib.suppress(HloParseError):  # any other exception fails the test
            parse_hlo(path.read_text(), str(path))
