"""Context of a check run's section: baseline against current, regressions first."""

from __future__ import annotations

from typing import Any

from xlacli.analysis.check.checks import IMPROVEMENT, OK, REGRESSION
from xlacli.paths import display_path
from xlacli.render.html.context import RunContext

_ORDER = {REGRESSION: 0, IMPROVEMENT: 1, OK: 2}


def context(run: RunContext) -> dict[str, Any] | None:
    """None for a run that was not a check."""
    if run.check is None:
        return None
    checks = [c for c in run.check.get("checks", []) if isinstance(c, dict)]
    checks.sort(key=lambda check: _ORDER.get(check.get("status", OK), 3))
    return {
        "baseline": display_path(str(run.check.get("baseline", ""))),
        "passed": bool(run.check.get("passed")),
        "regressions": run.check.get("regressions", 0),
        "improvements": run.check.get("improvements", 0),
        "checks": checks,
    }
