"""``--nproc N``: run the same command as N processes under torchrun (xlacli
does not launch ranks itself; torchrun does, and each process runs xlacli)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from xlacli.capture.ranks import rank_place
from xlacli.errors import UsageError

NPROC_OPTION = "--nproc"


def without_nproc(argv: Sequence[str]) -> list[str]:
    """The command line with ``--nproc N`` (or ``--nproc=N``) taken out; the
    script's own arguments after ``--`` are left alone."""
    kept: list[str] = []
    skip = False
    for index, word in enumerate(argv):
        if word == "--":
            return kept + list(argv[index:])
        if skip:
            skip = False
        elif word == NPROC_OPTION:
            skip = True
        elif not word.startswith(NPROC_OPTION + "="):
            kept.append(word)
    return kept


def run_under_torchrun(nproc: int, argv: Sequence[str], out: str | Path | None) -> int:
    """Run ``torchrun --standalone --nproc_per_node N -m xlacli ARGV`` and
    return its exit code (non-zero when any rank failed).

    Raises:
        UsageError: no ``--out``: the ranks must share one run folder.
    """
    refuse_under_launcher(NPROC_OPTION)
    if out is None:
        raise UsageError(
            f"{NPROC_OPTION} {nproc} needs --out: every rank writes under the same run folder",
            hint="pass --out runs/NAME; each process writes runs/NAME/rank-R/",
        )
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
    command += ["--nproc_per_node", str(nproc), "-m", "xlacli", *without_nproc(argv)]
    return subprocess.call(command)


def refuse_under_launcher(what: str) -> None:
    """Raises:
    UsageError: this process is a rank of a launched run, where ``what`` has no place.
    """
    place = rank_place(os.environ)
    if place is not None:
        raise UsageError(
            f"{what} under a launcher (rank {place.rank} of {place.world_size}, "
            f"{place.launcher}): run it as one process"
        )
