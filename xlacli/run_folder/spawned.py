"""The processes a script starts itself, in the run-folder contract (no torch).

A script that calls ``torch.multiprocessing.spawn`` or ``xmp.spawn`` launches
its own ranks. The xlacli child running it follows each one into a folder of
its own, ``RUN/rank-R/``, as torchrun's ranks have (``child/spawn_follow.py``
starts them, ``child/rank_process.py`` records in them), and the parent merges
them (``flows/spawned.py``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

# Set by the parent in the child's environment (inherited by every process the
# script starts): a rank's folder and the debug variables that name it, as JSON,
# with RANK_PLACEHOLDER where the rank goes. Unset: nothing is followed.
RANK_ENV_VAR = "XLACLI_RANK_ENV"
RANK_PLACEHOLDER = "@RANK@"
PROCESS_FILE = "process.json"  # in RUN/rank-R/: which process recorded there

TORCH_SPAWN = "torch.multiprocessing.spawn"
XMP_SPAWN = "xmp.spawn"
MULTIPROCESSING = "multiprocessing"


@dataclass(frozen=True)
class SpawnedProcess:
    """A process the script started and xlacli followed into ``RUN/rank-R/``."""

    rank: int
    pid: int
    launcher: str  # TORCH_SPAWN, XMP_SPAWN or MULTIPROCESSING

    def save(self, folder: Path) -> None:
        text = json.dumps(asdict(self), sort_keys=True) + "\n"
        (folder / PROCESS_FILE).write_text(text, encoding="utf-8")


def spawned_processes(root: Path) -> dict[int, SpawnedProcess]:
    """The processes followed under ``root``, by rank (empty: none was started)."""
    found: dict[int, SpawnedProcess] = {}
    for path in sorted(root.glob(f"*/{PROCESS_FILE}")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            process = SpawnedProcess(int(data["rank"]), int(data["pid"]), str(data["launcher"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue  # being written, or not ours
        found[process.rank] = process
    return dict(sorted(found.items()))


@dataclass(frozen=True)
class RankTemplate:
    """Where rank R of a followed script records, with RANK_PLACEHOLDER for R."""

    folder: str
    environment: dict[str, str]  # the debug variables naming files in ``folder``

    def dumps(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def loads(cls, text: str) -> RankTemplate:
        data = json.loads(text)
        return cls(str(data["folder"]), {str(k): str(v) for k, v in data["environment"].items()})

    def folder_of(self, rank: int) -> Path:
        return Path(self.folder.replace(RANK_PLACEHOLDER, str(rank)))

    def environment_of(self, rank: int) -> dict[str, str]:
        return {
            name: value.replace(RANK_PLACEHOLDER, str(rank))
            for name, value in self.environment.items()
        }
