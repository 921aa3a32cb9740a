"""Simple budgets for ad-hoc runs: ``--max-compiles`` and ``--fail-on-recompile``."""

from __future__ import annotations

from xlacli.errors import CheckFailed
from xlacli.report.run_report import RunReport
from xlacli.units import counted


def check_budgets(report: RunReport, *, max_compiles: int | None, fail_on_recompile: bool) -> None:
    """Raise ``CheckFailed`` (exit 1) when the run is over a budget."""
    if max_compiles is not None and report.compilations > max_compiles:
        raise CheckFailed(
            f"{report.compilations} compilations, over the budget of {max_compiles}",
            hint="the report above explains each compile",
        )
    steady = [event for event in report.events if event.steady_state]
    if fail_on_recompile and steady:
        first = steady[0]
        where = f" at {first.cause.location}" if first.cause.location else ""
        raise CheckFailed(
            f"{counted(len(steady), 'steady-state recompile')}: "
            f"step {first.step} {first.cause.category}{where}"
        )
    # A graph a cache served is the recompile it stands for (analysis/recompiles/served.py).
    served = [graph for graph in report.served_graphs if graph.steady_state]
    if fail_on_recompile and served:
        first_served = served[0]
        where = f" at {first_served.site}" if first_served.site else ""
        raise CheckFailed(
            f"{counted(len(served), 'steady-state graph change')} served from a cache: "
            f"step {first_served.step}{where}: {first_served.detail}"
        )
