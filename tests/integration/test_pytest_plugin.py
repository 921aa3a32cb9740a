"""The pytest plugin, run as users run it: pytester's subprocesses over real torch_xla tests.

Each test here runs one small pytest session in a child process (the plugin
must set torch_xla's switches before torch_xla is imported, which only a
fresh process shows) and asserts on its outcome, its failure messages and
the files it left. ``-p xlacli.pytest_plugin`` loads the plugin by name: the
entry point is checked apart (``tests/unit/test_pytest_plugin_entry.py``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, REPO

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

EXAMPLE = EXAMPLES / "pytest" / "test_budgets.py"
PLUGIN = ("-p", "xlacli.pytest_plugin", "-p", "no:cacheprovider")


def _line_of(path: Path, fragment: str) -> int:
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if fragment in line)


@pytest.fixture
def session(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytester folder whose sessions import this checkout's xlacli and keep
    their temporary files in ``tmp/`` (to see that nothing is left there)."""
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("PJRT_DEVICE", "CPU")
    monkeypatch.setenv("TMPDIR", str(pytester.mkdir("tmp")))
    for name in ("XLA_IR_DEBUG", "XLA_HLO_DEBUG", "PT_XLA_DEBUG_LEVEL", "XLA_SAVE_TENSORS_FILE"):
        monkeypatch.delenv(name, raising=False)
    return pytester


def _left_in_tmp(pytester: pytest.Pytester) -> list[str]:
    return sorted(path.name for path in (pytester.path / "tmp").iterdir())


def _kept_runs(pytester: pytest.Pytester) -> list[Path]:
    runs = pytester.path / ".xlacli" / "runs"
    return sorted(runs.iterdir()) if runs.exists() else []


# The example's model for the other module too; torch_xla imported inside, as
# a conftest.py must for a budget to be explained without --xla-compiles.
SHARED_MODEL = """
import pytest


@pytest.fixture(scope="session")
def model():
    import torch
    import torch_xla

    return torch.nn.Linear(16, 4).to(torch_xla.device())
"""
MORE_BUDGETS = """
import os
import pytest
import torch
import torch_xla

from test_budgets import predict


@pytest.mark.xla_compiles(exact=2)
def test_exact_too_few(model):
    predict(model, torch.randn(9, 16))


@pytest.mark.xla_compiles(maximum=1)
def test_unknown_argument():
    pass


@pytest.mark.xla_compiles(max=0)
def test_armed_before_import(tmp_path_factory):
    # The switches torch_xla read at import, as xlacli compile gives its child.
    assert os.environ["XLA_IR_DEBUG"] == "1"
    assert "--xla_dump_to=" in os.environ["XLA_FLAGS"]
"""


def test_budgets_pass_fail_and_explain_like_compile(session: pytest.Pytester) -> None:
    shutil.copy(EXAMPLE, session.path / EXAMPLE.name)
    session.makeconftest(SHARED_MODEL)
    session.makepyfile(test_more=MORE_BUDGETS)
    result = session.runpytest_subprocess(*PLUGIN, "-rf")
    result.assert_outcomes(passed=3, failed=3)
    out = result.stdout.str()

    # The short last batch: a steady-state input_shape recompile at the user's line.
    line = _line_of(EXAMPLE, "logits = model(batch.to(")
    assert "xla_compiles: 1 steady-state compilation after 1 warm-up step" in out
    assert f"input_shape  test_budgets.py:{line}" in out
    assert "f32[12,16] -> f32[6,16]" in out
    assert "fix: pad or bucket input shapes" in out
    # exact= with too few names what was compiled; a bad marker says what it takes.
    assert "1 compilation, expected exactly 2 (exact=2)" in out
    assert "xla_compiles does not take maximum" in out

    # Only the failing budgets keep their dumps, each in a run folder xlacli reads.
    kept = _kept_runs(session)
    assert len(kept) == 2, kept
    assert all(str(run) in out for run in kept)
    report = json.loads(
        next(r for r in kept if "budgets" in r.name).joinpath("report.json").read_text()
    )
    assert [e["cause"]["category"] for e in report["events"]][-1] == "input_shape"
    assert report["events"][-1]["steady_state"] is True
    assert _left_in_tmp(session) == []


TOO_LATE_CONFTEST = "import torch_xla\n"
TOO_LATE_TEST = """
import pytest
import torch
import torch_xla


@pytest.mark.xla_compiles(max=0)
def test_compiles_once():
    kept = torch.ones(3).to(torch_xla.device()).add_(1)
    torch_xla.sync()


def test_unbudgeted():
    kept = torch.ones(4).to(torch_xla.device()).mul_(2)
    torch_xla.sync()
"""


def test_too_late_says_who_imported_torch_xla_and_the_option_fixes_it(
    session: pytest.Pytester,
) -> None:
    session.makeconftest(TOO_LATE_CONFTEST)
    session.makepyfile(test_late=TOO_LATE_TEST)
    late = session.runpytest_subprocess(*PLUGIN)
    late.assert_outcomes(passed=1, failed=1)
    out = late.stdout.str()
    assert "xla_compiles: 1 compilation, over the budget of 0 (max=0)" in out  # still counted
    assert "torch_xla was imported (by " in out
    assert "conftest.py:1)" in out
    assert "Pass --xla-compiles" in out
    assert _kept_runs(session) == []  # nothing to keep: nothing was dumped

    early = session.runpytest_subprocess(*PLUGIN, "--xla-compiles")
    early.assert_outcomes(passed=1, failed=1)
    out = early.stdout.str()
    assert "first_compile  test_late.py:" in out
    assert "torch_xla was imported" not in out
    # --xla-compiles also counts every test's compiles.
    assert "XLA compilations per test (xlacli)" in out
    assert "test_late.py::test_unbudgeted" in out
    assert _left_in_tmp(session) == []


# One module per worker: --dist loadfile hands each of the two workers one file
# at the start, so both run budgets in the same session.
XDIST_TEST = """
import os
from pathlib import Path

import pytest
import torch
import torch_xla


@pytest.mark.xla_compiles(max=1)
def test_two_shapes():
    worker = os.environ["PYTEST_XDIST_WORKER"]
    seen = Path(os.environ["XLACLI_TEST_SEEN"], worker)
    seen.write_text(os.environ["PT_XLA_DEBUG_FILE"])
    for size in (3, 4):
        kept = torch.ones(size).to(torch_xla.device()).add_(1)
        torch_xla.sync()


@pytest.mark.xla_compiles(max=1)
def test_within_budget():
    kept = torch.ones(5).to(torch_xla.device()).mul_(2)
    torch_xla.sync()
"""


def test_xdist_workers_each_dump_apart_and_explain(
    session: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = session.mkdir("seen")
    monkeypatch.setenv("XLACLI_TEST_SEEN", str(seen))
    session.makepyfile(test_left=XDIST_TEST, test_right=XDIST_TEST)
    result = session.runpytest_subprocess(*PLUGIN, "-p", "xdist", "-n", "2", "--dist", "loadfile")
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()

    # Both workers ran a budget, each with its own dump folder.
    logs = {path.name: path.read_text() for path in seen.iterdir()}
    assert sorted(logs) == ["gw0", "gw1"]
    assert all(f"xlacli-pytest-{worker}-" in log for worker, log in logs.items())
    assert len({Path(log).parent for log in logs.values()}) == 2
    # Each exceeded budget is explained as xlacli compile explains it, at its own file's line.
    line = _line_of(session.path / "test_left.py", "torch.ones(size)")
    assert out.count("2 compilations, over the budget of 1 (max=1)") >= 2  # + the summary
    assert f"input_shape  test_left.py:{line}" in out
    assert f"input_shape  test_right.py:{line}" in out
    assert "f32[3] -> f32[4]" in out
    # Only the two failures keep a run folder, each named in its message.
    kept = _kept_runs(session)
    assert len(kept) == 2, kept
    assert all(str(run) in out for run in kept)
    assert _left_in_tmp(session) == []


NO_MARKER_FIRST = """
import sys

IMPORTED_EARLY = "torch_xla" in sys.modules


def test_plugin_imported_nothing():
    assert not IMPORTED_EARLY
"""
NO_MARKER_XLA = """
import os
import torch
import torch_xla


def test_runs_as_without_xlacli():
    kept = torch.ones(3).to(torch_xla.device()).add_(1)
    torch_xla.sync()
    assert "XLA_IR_DEBUG" not in os.environ
    assert "PT_XLA_DEBUG_FILE" not in os.environ
    assert "xla_dump_to" not in os.environ.get("XLA_FLAGS", "")
"""


def test_without_marker_or_option_nothing_is_set(session: pytest.Pytester) -> None:
    session.makepyfile(test_a_plain=NO_MARKER_FIRST, test_b_xla=NO_MARKER_XLA)
    result = session.runpytest_subprocess(*PLUGIN)
    result.assert_outcomes(passed=2)
    assert "XLA compilations per test" not in result.stdout.str()
    assert not (session.path / ".xlacli").exists()
    assert _left_in_tmp(session) == []
    assert "PT_XLA_DEBUG_FILE" not in os.environ  # the outer session is untouched too


# Issue 34: a budget counts graph changes, not compile events. The first test
# compiles both shapes into torch_xla's in-process cache; run after it, the
# budgeted tests compile nothing, and must fail all the same.
CACHE_ORDERS = """
import pytest
import torch
import torch_xla

torch.manual_seed(0)
MODEL = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))


def run_batches(sizes):
    device = torch_xla.device()
    model = MODEL.to(device)
    outputs = []
    for size in sizes:
        outputs.append(model(torch.randn(size, 16).to(device)))  # kept: a graph to run
        torch_xla.sync()
    return outputs


def test_a_warms_the_cache():
    run_batches([10, 10, 4])  # no budget: it compiles both shapes


@pytest.mark.xla_compiles(steady=0)
def test_b_short_last_batch():
    run_batches([10, 10, 10, 4])


@pytest.mark.xla_compiles(max=1)
def test_c_two_shapes():
    run_batches([10, 4])
"""


@pytest.mark.parametrize(
    ("order", "args", "passed"),
    [
        (
            "alone",
            ("test_orders.py::test_b_short_last_batch", "test_orders.py::test_c_two_shapes"),
            0,
        ),
        ("after", ("test_orders.py",), 1),
        ("xdist", ("test_orders.py", "-p", "xdist", "-n", "2"), 1),
    ],
    ids=lambda value: value if isinstance(value, str) else "",
)
def test_a_budget_fails_alike_alone_after_other_tests_and_under_xdist(
    session: pytest.Pytester, order: str, args: tuple[str, ...], passed: int
) -> None:
    session.makepyfile(test_orders=CACHE_ORDERS)
    result = session.runpytest_subprocess(*PLUGIN, "-rf", *args)
    result.assert_outcomes(failed=2, passed=passed)
    out = result.stdout.str()
    # The short last batch: one steady-state change, at the sync after the batch.
    assert "1 steady-state" in out and "over the budget of 0 (steady=0" in out, out
    assert "f32[10,16] -> f32[4,16]" in out, out
    # Two shapes: two graphs over max=1, whether compiled here or served.
    assert "over the budget of 1 (max=1)" in out, out
    if order == "after":  # said which it was
        assert "served from torch_xla's cache" in out, out


def test_switches_stay_off_for_a_file_beside_a_budgeted_one(session: pytest.Pytester) -> None:
    """pytest makes a module node for every file of a folder it enters; only the
    modules it collects arm torch_xla's switches."""
    session.makepyfile(
        test_budgeted=CACHE_ORDERS,
        test_other="""
import os


def test_environment_untouched():
    assert "XLA_IR_DEBUG" not in os.environ
    assert "PT_XLA_DEBUG_FILE" not in os.environ
""",
    )
    result = session.runpytest_subprocess(*PLUGIN, "test_other.py")
    result.assert_outcomes(passed=1)
    assert not (session.path / ".xlacli").exists()
