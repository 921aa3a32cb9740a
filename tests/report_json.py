"""A saved report's steps, read from its JSON as a user's script would: version 2
keeps runs of equal steps (``step_runs``); these give them back a step at a time."""

from __future__ import annotations

from typing import Any


def step_records(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One dict a step (a step inside a run has its run's fields and first step + n; a
    cycle's runs repeat, shifted by its period each time)."""
    steps = []
    for segment in report["step_runs"]:
        runs, repeats = segment.get("runs", [segment]), segment.get("repeats", 1)
        period = sum(run["steps"] for run in runs)
        for repeat in range(repeats):
            for run in runs:
                shared = {k: v for k, v in run.items() if k not in ("first_step", "steps")}
                first = run["first_step"] + repeat * period
                steps += [{**shared, "step": first + n} for n in range(run["steps"])]
    return steps


def executions_per_step(report: dict[str, Any]) -> list[int]:
    return [step["executions"] for step in step_records(report)]
