"""xlacli's pytest plugin: compile budgets for tests, explained as ``xlacli compile`` would.

Registered through the ``pytest11`` entry point; it does nothing unless asked
(``@pytest.mark.xla_compiles(...)``, the ``xla_compiles`` fixture, or
``--xla-compiles``). Importing it stays cheap: no torch, no rich.

torch_xla reads its debug switches once, at import, and the tests run in
pytest's own process, so the plugin sets them as early as it can: before the
conftest.py files load with ``--xla-compiles``, else before the first test
module of the session that names ``xla_compiles`` is imported (a module the
command line did not collect never arms them). When torch_xla came first,
budgets still count, and the message says why nothing is explained.
"""

from __future__ import annotations

import sys
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from xlacli.pytest_plugin.dumps import ImportWatch, SessionDumps
    from xlacli.pytest_plugin.fixture import XlaCompiles
    from xlacli.pytest_plugin.measure import TestMeasure

MARKER = "xla_compiles"
RUNS_DIR = Path(".xlacli") / "runs"


@dataclass
class PluginState:
    """The session's switches: armed, or why they could not be."""

    asked: bool  # --xla-compiles
    runs_dir: Path
    watch: ImportWatch | None = None
    dumps: SessionDumps | None = None
    too_late: str | None = None
    counts: dict[str, int] = field(default_factory=dict)  # --xla-compiles: per test

    def arm(self) -> None:
        """Turn the switches on, unless torch_xla is imported already (then say who did)."""
        from xlacli.pytest_plugin.dumps import SessionDumps

        if self.dumps is not None or self.too_late is not None:
            return
        if "torch_xla" not in sys.modules:
            self.dumps = SessionDumps.arm()
            return
        importer = self.watch.importer if self.watch is not None else None
        by = f" (by {importer})" if importer else ""
        self.too_late = (
            f"torch_xla was imported{by} before xlacli could turn on its debug switches, "
            "which torch_xla reads once, at import: compiles are counted but not explained. "
            "Pass --xla-compiles (it acts before conftest.py files load), or import "
            "torch_xla inside tests and fixtures rather than at the top of a conftest.py."
        )


STATE = pytest.StashKey[PluginState]()
MEASURE: pytest.StashKey[TestMeasure] = pytest.StashKey()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("xlacli", "compile budgets (xlacli)")
    group.addoption(
        "--xla-compiles",
        action="store_true",
        default=False,
        help="turn on torch_xla's debug switches before conftest.py files load, count every "
        "test's compiles and list the top ones; budgets (@pytest.mark.xla_compiles) "
        "are explained",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    from xlacli.pytest_plugin.dumps import ImportWatch

    asked = bool(getattr(early_config.known_args_namespace, "xla_compiles", False))
    state = PluginState(asked=asked, runs_dir=early_config.rootpath / RUNS_DIR)
    early_config.stash[STATE] = state
    if asked:
        state.arm()
    else:
        state.watch = ImportWatch()  # to name who imported torch_xla, if it is too late
        state.watch.install()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(max=None, exact=None, steady=None, warmup=2): fail the test when it "
        "compiles more XLA graphs than this (steady: after `warmup` syncs), with xlacli's "
        "explanation of each extra compile",
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # Here, not only at unconfigure: an xdist worker's process ends right after
    # its session does.
    _disarm(session.config)


def pytest_unconfigure(config: pytest.Config) -> None:
    _disarm(config)


def _disarm(config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if state.watch is not None:
        state.watch.remove()
    if state.dumps is not None:
        state.dumps.disarm()
        state.dumps = None


@pytest.hookimpl(tryfirst=True)
def pytest_make_collect_report(collector: pytest.Collector) -> None:
    """Before a test module is imported: arm if it names the marker or fixture.

    Here, not at ``pytest_pycollect_makemodule``: pytest makes a module node for
    every file of a folder it enters, also those the command line did not ask
    for (``pytest tests/test_other.py`` makes ``tests/test_budget.py``'s too),
    but collects (imports) only the modules of the session.
    """
    if not isinstance(collector, pytest.Module):
        return
    state = collector.config.stash.get(STATE, None)
    if state is None or state.dumps is not None or state.too_late is not None:
        return
    try:
        names_us = MARKER in collector.path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    if names_us:
        state.arm()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A budget applied where no module named it (a conftest's hook): arm or say why not."""
    state = config.stash.get(STATE, None)
    if state is not None and any(_wants_measure(item) for item in items):
        state.arm()


def _wants_measure(item: pytest.Item) -> bool:
    return item.get_closest_marker(MARKER) is not None or MARKER in getattr(
        item, "fixturenames", ()
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    state = item.config.stash.get(STATE, None)
    if state is None:
        return (yield)
    if not _wants_measure(item):
        return (yield from _count_only(state, item))
    return (yield from _measured(state, item))


def _count_only(state: PluginState, item: pytest.Item) -> Generator[None, Any, Any]:
    """A test without a budget: its count for the summary (--xla-compiles), and
    its dumps dropped once it is over (nobody reads them: the folder stays small)."""
    counting = state.asked and "torch_xla" in sys.modules
    if counting:
        from xlacli.child.in_process import compiles_since, compiles_so_far

        before = compiles_so_far()
    try:
        return (yield)
    finally:
        if counting:
            state.counts[item.nodeid] = compiles_since(before)
        if state.dumps is not None:
            state.dumps.clear()


def _measured(state: PluginState, item: pytest.Item) -> Generator[None, Any, Any]:
    from xlacli.pytest_plugin.budget import Budget, BudgetError
    from xlacli.pytest_plugin.measure import TestMeasure

    marker = item.get_closest_marker(MARKER)
    try:
        budget = Budget.from_marker(marker.args, marker.kwargs) if marker else None
    except BudgetError as error:
        bad_marker: BudgetError | None = error
    else:
        bad_marker = None
    if bad_marker is not None:
        pytest.fail(f"{item.nodeid}: {bad_marker}", pytrace=False)
    measure = TestMeasure(Path(str(item.path)), state.dumps, state.too_late)
    item.stash[MEASURE] = measure
    try:
        result = yield
        state.counts[item.nodeid] = measure.compiles
        message = measure.check(budget, state.runs_dir, final=True) if budget else None
        if message is not None:
            pytest.fail(message, pytrace=False)
        return result
    finally:
        measure.close()
        if state.dumps is not None:
            state.dumps.clear()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    if state.too_late is not None and state.counts:
        terminalreporter.write_line(f"xla_compiles: {state.too_late}", yellow=True)
    if state.asked and state.counts:
        terminalreporter.section("XLA compilations per test (xlacli)")
        top = sorted(state.counts.items(), key=lambda item: (-item[1], item[0]))[:10]
        for nodeid, count in top:
            terminalreporter.write_line(f"{count:5d}  {nodeid}")
        total = sum(state.counts.values())
        terminalreporter.write_line(f"{total:5d}  in {len(state.counts)} tests")


@pytest.fixture
def xla_compiles(request: pytest.FixtureRequest) -> XlaCompiles:
    """Compile budgets inside a test: ``with xla_compiles.budget(1): step(...)``,
    and ``count``, ``report()`` afterwards (see ``xlacli.pytest_plugin.fixture``)."""
    from xlacli.pytest_plugin.fixture import XlaCompiles

    return XlaCompiles(request.node, request.config.stash[STATE])
