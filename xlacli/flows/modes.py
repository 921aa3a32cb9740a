"""Which execution modes a capture supports: lazy tracing, or torch.compile."""

from __future__ import annotations

from typing import Any

from xlacli.errors import UsageError

MODES = ("lazy", "dynamo")


def check_mode(target: Any, mode: str) -> None:
    """Refuse a mode the target cannot run in (exit 2, one line).

    ``--mode dynamo`` wraps the model's forward or its ``step()`` in
    ``torch.compile``: a script (a target whose ``is_script`` is true) has
    neither, so it must call ``torch.compile`` itself, which every mode reports.

    Raises:
        UsageError: an unknown mode, or ``dynamo`` on a script.
    """
    if mode not in MODES:
        raise UsageError(f"unknown mode {mode!r}; expected one of {', '.join(MODES)}")
    if mode == "dynamo" and getattr(target, "is_script", False):
        raise UsageError(
            f"--mode dynamo needs a model file (get_model/get_inputs): {target.path} is run "
            "as a script, which xlacli cannot wrap in torch.compile",
            hint="call torch.compile(model, backend='openxla') in the script and run it with "
            "--mode lazy: xlacli reports Dynamo's graphs wherever torch.compile is called",
        )
