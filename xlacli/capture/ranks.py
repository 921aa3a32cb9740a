"""Which process of a multi-process run this is (parent side, no torch).

xlacli does not launch ranks: torchrun, ``xmp.spawn`` and a pod's ssh do. Under
one of them every process runs the same xlacli command, and each writes its own
folder, ``OUT/rank-R/``, so no two processes share a file; rank 0 merges them
(``xlacli.assemble.ranks``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

RANK_FOLDER_PREFIX = "rank-"
# torchrun (and torch.distributed.launch, Slurm wrappers following it).
_TORCHRUN = ("RANK", "WORLD_SIZE")
# A TPU pod: the same command on every host (gcloud ... ssh --worker=all); the
# worker id is the process index torch_xla's runtime reports on a pod of one
# process per host.
_POD_WORKER = "TPU_WORKER_ID"
_POD_HOSTS = "TPU_WORKER_HOSTNAMES"


@dataclass(frozen=True)
class RankPlace:
    """This process's place in a run of ``world_size`` processes."""

    rank: int
    world_size: int
    launcher: str  # "torchrun" or "tpu-pod"

    @property
    def is_merger(self) -> bool:
        """Rank 0 merges the ranks' folders into one report."""
        return self.rank == 0


def rank_place(env: Mapping[str, str]) -> RankPlace | None:
    """This process's rank from its launcher's variables; None for a single
    process (no launcher, or a world of one: the single-process path)."""
    place = _from_torchrun(env) or _from_pod(env)
    if place is None or place.world_size <= 1:
        return None
    return place


def _from_torchrun(env: Mapping[str, str]) -> RankPlace | None:
    if not all(env.get(name, "").isdigit() for name in _TORCHRUN):
        return None
    return RankPlace(int(env["RANK"]), int(env["WORLD_SIZE"]), "torchrun")


def _from_pod(env: Mapping[str, str]) -> RankPlace | None:
    worker, hosts = env.get(_POD_WORKER, ""), env.get(_POD_HOSTS, "")
    if not worker.isdigit() or not hosts:
        return None
    return RankPlace(int(worker), len(hosts.split(",")), "tpu-pod")


def rank_folder(out: Path, rank: int) -> Path:
    """Where rank ``rank`` of a run in ``out`` writes its own run folder."""
    return out / f"{RANK_FOLDER_PREFIX}{rank}"


def rank_folders(out: Path) -> dict[int, Path]:
    """The rank folders under ``out``, by rank."""
    found: dict[int, Path] = {}
    for path in out.glob(f"{RANK_FOLDER_PREFIX}*"):
        suffix = path.name[len(RANK_FOLDER_PREFIX) :]
        if path.is_dir() and suffix.isdigit():
            found[int(suffix)] = path
    return dict(sorted(found.items()))
