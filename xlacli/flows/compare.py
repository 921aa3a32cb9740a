"""``--mode both``: the same model lazily and under torch.compile, each in its own
child; ``xlacli.api.compile_modes`` and ``profile_modes`` compare them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xlacli.flows.launch import refuse_under_launcher
from xlacli.flows.modes import check_mode

COMPARED_MODES = ("lazy", "dynamo")


def run_modes(target: Any, run: Callable[[str], Any]) -> dict[str, Any]:
    """Run each compared mode in turn (each in its own child); results by mode.

    Raises:
        UsageError: under a launcher, or ``target`` cannot run under torch.compile
            (said before the lazy run, not after it).
    """
    refuse_under_launcher("--mode both")
    check_mode(target, "dynamo")
    return {mode: run(mode) for mode in COMPARED_MODES}
