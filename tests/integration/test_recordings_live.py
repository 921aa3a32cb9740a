"""The recordings the tests replay still say what a live run says (issue 35).

The golden reports are held to replays of recorded child runs
(``tests/recording.py``). Here one example per capture path runs live, child and
all, and its report is held to the same golden: a torch_xla (or child) change
that makes the child write something else fails here, and then
``XLACLI_RECORD=1 pytest -n 2`` records every recording again.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import REPO, run_cli
from tests.integration.test_report_golden import (
    COMMANDS,
    REPORTS,
    comparable,
    graphs_by_order,
    normalize,
)
from tests.recorded_cli import RecordedCall, recorded_call
from tests.recording import meta_file, stale_reason

pytestmark = pytest.mark.e2e

# One example per capture path the recordings stand for.
LIVE = {
    "mlp": "a model file",
    "scripts__train_cnn": "a script",
    # A script run to its end: the child writes each new graph's IR itself (graph_ir.py).
    "scripts__train_causal_lm": "a script run to its end (a Hugging Face model, AdamW)",
    "scripts__compiled__eval_no_grad": "torch.compile in a script run to its end",
    "dynamo__graph_break": "Dynamo (--mode dynamo)",
    "scripts__compiled__train_eager": "eager mode in a script",
    "spmd__data_parallel_mlp": "SPMD over 4 devices",
}


@pytest.mark.parametrize("name", sorted(LIVE))
def test_a_live_run_says_what_its_recording_says(name: str, tmp_path) -> None:
    words = ["compile", *COMMANDS[name]]
    assert _why_not_replayed(_shared(words)) is None
    at = words.index("--") if "--" in words else len(words)
    argv = [*words[:at], "--out", str(tmp_path / "run"), *words[at:]]
    result = run_cli(*argv, cwd=REPO, timeout=900, live=True)
    assert result.code in (0, 1), result.stderr
    report = normalize(json.loads((tmp_path / "run" / "report.json").read_text()))
    expected = json.loads((REPORTS / f"{name}.json").read_text())
    assert graphs_by_order(comparable(report)) == graphs_by_order(comparable(expected))


def test_every_example_has_a_fresh_recording() -> None:
    """The examples' commands replay (a missing one would run live, slowly)."""
    problems = {
        name: _why_not_replayed(_shared(["compile", *words])) for name, words in COMMANDS.items()
    }
    assert {name: why for name, why in problems.items() if why} == {}


def _shared(words: list[str]) -> RecordedCall:
    return recorded_call(words, REPO, None, shared=True)


def _why_not_replayed(call: RecordedCall) -> str | None:
    if not meta_file(call.recording).exists():
        return "not recorded"
    return stale_reason(call.recording, call.words, call.places)
