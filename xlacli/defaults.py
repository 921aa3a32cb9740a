"""Each command's default step counts, in one place: the commands' help shows
them and the flows use them, so the two cannot drift."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepDefaults:
    """How many steps a command runs, and how many of them are warm-up;
    ``script_to_end``: a script given no ``--steps`` runs to its end instead."""

    steps: int
    warmup: int
    script_to_end: bool = True


# compile: two warm-up steps (the first compile; a training step's optimizer
# state) and one step after them, so the cached step, or a recompile, is seen.
COMPILE = StepDefaults(steps=3, warmup=2)
# profile: warm-up steps run untraced so compiles happen first, then enough
# steps for stable percentiles.
PROFILE = StepDefaults(steps=50, warmup=5, script_to_end=False)
# check: a few steps past the warm-up, enough to catch a steady-state recompile.
CHECK = StepDefaults(steps=5, warmup=2)
