"""Every example's report, held against a golden copy.

Each file under ``examples/`` names its own ``xlacli compile ...`` command in its
docstring; this test runs that command and compares ``report.json`` with
``tests/assets/golden/reports/<example>.json``, leaving out what differs from run
to run (times, machine paths, versions). A change to what a report says shows up
here as a diff to review.

Regenerate after an intended change, then review the diff before committing:

    XLACLI_UPDATE_GOLDENS=1 pytest tests/integration/test_report_golden.py -n 2
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import EXAMPLES, GOLDEN, REPO
from tests.report_statements import contradictions

REPORTS = GOLDEN / "reports"
UPDATE = os.environ.get("XLACLI_UPDATE_GOLDENS") == "1"
_COMMAND = re.compile(r"xlacli compile (examples/\S+\.py[^\n`\"]*)")
# Measured, not decided: they change from run to run.
_VOLATILE_KEY = re.compile(r"(^|_)(time|times)(_s|_ns)?$|_time_s$|^wall_time|^versions$|^run_dir$")
# Counters of tensor lifetimes follow Python's garbage collector, not the program.
_VOLATILE_COUNTERS = ("CreateXlaTensor", "DestroyXlaTensor", "DestroyLtcTensor", "CreateLtcTensor")


# Examples run another way: through the Python API, under pytest, under a launcher.
_OTHER_RUNNERS = ("api", "pytest", "ranks")


def _examples() -> list[Path]:
    return [
        path
        for path in sorted(EXAMPLES.rglob("*.py"))
        if path.relative_to(EXAMPLES).parts[0] not in _OTHER_RUNNERS
    ]


def example_commands() -> dict[str, list[str]]:
    """Each example's first documented ``xlacli compile`` command, as arguments."""
    commands = {}
    for path in _examples():
        match = _COMMAND.search(path.read_text(encoding="utf-8"))
        if match is not None:
            name = path.relative_to(EXAMPLES).with_suffix("").as_posix().replace("/", "__")
            commands[name] = shlex.split(match.group(1).split("#")[0])
    return commands


def normalize(value: Any, key: str = "") -> Any:
    """The report with volatile fields dropped and machine paths made portable."""
    if isinstance(value, dict):
        return {
            _portable(k): normalize(v, k)  # keys may be paths too (f64_user_lines)
            for k, v in sorted(value.items())
            if not _VOLATILE_KEY.search(k) and not (key == "counters" and k in _VOLATILE_COUNTERS)
        }
    if isinstance(value, list):
        return [normalize(v, key) for v in value]
    if isinstance(value, str):
        return _portable(value)
    return value


def _portable(text: str) -> str:
    """Machine paths as every checkout writes them: relative to the repository, and
    ``<site-packages>/`` for the virtual environment's packages."""
    text = text.replace(str(REPO) + "/", "")
    return re.sub(r"\S*/site-packages/", "<site-packages>/", text)


COMMANDS = example_commands()


def test_every_example_documents_its_command() -> None:
    """Each example says how to run it; the profile examples are held by the profile
    tests, the others by a golden report here."""
    profiled = {
        _name(path)
        for path in _examples()
        if re.search(r"xlacli profile examples/", path.read_text(encoding="utf-8"))
    }
    examples = {_name(path) for path in _examples()}
    assert not examples - set(COMMANDS) - profiled, examples - set(COMMANDS) - profiled


def _name(path: Path) -> str:
    return path.relative_to(EXAMPLES).with_suffix("").as_posix().replace("/", "__")


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_report_matches_golden(name: str, capture_once) -> None:
    # The example's documented command, run once for every test that runs it.
    captured = capture_once("compile", *COMMANDS[name])
    report_file = captured.run / "report.json"
    assert report_file.exists(), captured.result.stderr
    # Its text report says nothing its JSON contradicts ("training steps" included).
    data = json.loads(report_file.read_text())
    assert contradictions(captured.result.stdout, data) == [], captured.result.stdout
    report = normalize(json.loads(report_file.read_text()))
    golden = REPORTS / f"{name}.json"
    if UPDATE:
        # The whole Dynamo section is kept for a reader; only its story is compared.
        kept = comparable(report)
        if report.get("dynamo"):
            kept = {**kept, "dynamo": report["dynamo"]}
        golden.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n")
    assert golden.exists(), f"no golden report for {name}: run with XLACLI_UPDATE_GOLDENS=1"
    actual, expected = comparable(report), comparable(json.loads(golden.read_text()))
    if os.environ.get("XLACLI_LIVE") == "1":  # run here, recorded elsewhere: hashes differ
        actual, expected = graphs_by_order(actual), graphs_by_order(expected)
    assert actual == expected


_GRAPH_HASH = re.compile(r"(?<![0-9a-f])[0-9a-f]{24,32}(?![0-9a-f])")
_LONG_DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d{6,}(?![\d])")


def graphs_by_order(report: dict) -> dict:
    """The report with each graph hash named by its order of first appearance,
    and device-computed decimals in text cut to their first digits.

    torch_xla's graph hashes differ between machines for the same graphs (an AMD
    EPYC here hashed examples/mlp.py's step as fe7bc44a..., the machine that
    recorded it as 90f7e957...): a live run is held to a recording made on
    another machine by which graph is which, not by the hashes' digits.
    """
    text = json.dumps(report, sort_keys=True)
    names: dict[str, str] = {}
    text = _GRAPH_HASH.sub(lambda m: names.setdefault(m.group(), f"graph-{len(names) + 1}"), text)
    # A value computed on the device and quoted in a sentence (a Dynamo guard on a
    # loss: -10.961492538 here, -10.961493492 there): its first digits.
    text = _LONG_DECIMAL.sub(lambda m: f"{float(m.group()):.4g}", text)
    return json.loads(text)


def comparable(report: dict) -> dict:
    """The normalized report without what a Dynamo run varies from run to run."""
    if not report.get("dynamo"):
        return report
    report = {**report, "counters": dict(report["counters"])}
    # torch_xla's Dynamo bridge clears and restores counters while it extracts a
    # graph: these two vary from run to run (the report's own counts do not).
    for counter in ("CreateDataHandles", "ExecuteComputation"):
        report["counters"].pop(counter, None)
    # Under a loaded `pytest -n 2` the Dynamo section of the graph-break examples
    # differed once from a quiet run's (alone and in smaller parallel runs it
    # matched every time): compare what it explains (graphs, breaks, recompiles,
    # each frame's function, line and size); test_dynamo_e2e and
    # test_compiled_scripts_e2e hold the rest against bare runs.
    report["dynamo"] = _dynamo_story(report["dynamo"])
    return report


def _dynamo_story(section: dict) -> dict:
    frames = [
        {key: frame.get(key) for key in ("function", "location", "fx_ops")}
        for frame in section.get("frames", [])
    ]
    kept = ("fx_graphs", "extractions", "graph_breaks", "recompiles", "source")
    return {**{key: section.get(key) for key in kept}, "frames": frames}


# Issue 40: a report a person reads on a terminal stays short, whatever the graph:
# an FSDP model's hundreds of split weights and collectives are summarised (the
# full tables stay in report.json and the HTML page).
MAX_REPORT_LINES, READ_WIDTH = 150, 100


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_terminal_report_fits_150_lines_at_100_columns(name: str, capture_once) -> None:
    from tests.assets.golden.text_reports.make_goldens import render

    captured = capture_once("compile", *COMMANDS[name])  # shared with the golden test
    text = render((captured.run / "report.json").read_text(), READ_WIDTH)
    lines = text.splitlines()
    assert len(lines) <= MAX_REPORT_LINES, f"{name}: {len(lines)} lines\n{text}"
