"""What the parent asks the child to do, and where the run's files live."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

# Up to this many steps, the per-sync IR dump costs less than a second (~15-20 ms a
# step on a small training step); past it, its cost and size grow with the run.
NATIVE_IR_DUMP_MAX_STEPS = 50
# Steps in a row that compiled nothing before the child stops recording the
# backward ops' lines (``child/observers.py``): a run that settles pays them
# once; a short run (every example and recorded test run here has at most 11
# such steps before a later compile) never pauses, and a graph compiled after
# a shorter calm keeps its lines.
STEADY_STEPS_BEFORE_PAUSE = 12


@dataclass(frozen=True)
class CaptureRequest:
    """One capture: which model, how many steps, which artifacts.

    Written by the parent as ``request.json`` in the run folder and read back
    by the child, so the child needs nothing but that path.
    """

    model_path: str
    model_entry: str | None
    steps: int
    train: bool = False
    optimizer: str = "sgd"
    warmup: int = 0  # steps run before the recorded ones (profile)
    debug_artifacts: bool = True  # HLO dumps, source locations, the PT_XLA_DEBUG log
    ir_dump: bool = True  # each new graph's IR (child/graph_ir.py): compile, not profile
    profile_logdir: str | None = None  # set: trace the recorded steps (profile)
    profile_session: str | None = None
    wait_each_step: bool = True  # wait for the device after each step (clocks with device work)
    devices: int | None = None  # SPMD: virtual CPU devices to create (None: the backend's own)
    max_trace_steps: int | None = None  # profile: trace this many steps, run the rest untraced
    mode: str = "lazy"  # "dynamo": run the step under torch.compile(backend="openxla")
    target_kind: str = "model"  # "model" (the contract), "script" (a file), "module" (-m)
    module: str | None = None  # the -m module name (target_kind "module")
    script_args: list[str] = field(default_factory=list)  # the program's argv after ``--``
    run_to_end: bool = False  # a script without --steps: no step limit
    # The command that made the run (``xlacli runs`` lists it): compile, profile or check.
    command: str = "compile"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> CaptureRequest:
        data = json.loads(path.read_text(encoding="utf-8"))
        # Tolerant: a request written by another xlacli version keeps loading.
        known = {f.name for f in fields(cls)}
        return cls(**{key: value for key, value in data.items() if key in known})

    @property
    def ir_per_sync(self) -> bool:
        """torch_xla's own IR dump of every sync (``XLA_SAVE_TENSORS_FILE``) from
        the start, for a run of known short length: it has every graph, also those
        compiled where no Python hook sees them. Every other run has the child
        write each new graph's IR once (``child/graph_ir.py``); a script run to
        its end (its length unknown, and each sync of a large graph costs ~0.5 s
        printed) hands over to the per-sync dump if it switches eager mode on
        before its first graph."""
        return (
            self.ir_dump
            and not self.run_to_end
            and self.warmup + self.steps <= NATIVE_IR_DUMP_MAX_STEPS
        )

    def planned_steps(self, ran: int) -> int:
        """The steps asked for: warm-up and steps, or (a script run to its end)
        the steps it ran."""
        return ran if self.run_to_end else self.warmup + self.steps

    @property
    def is_script(self) -> bool:
        """The target runs as ``__main__`` (a script file or a -m module)."""
        return self.target_kind != "model"


@dataclass(frozen=True)
class RunPaths:
    """The files of one run folder."""

    root: Path

    @property
    def request(self) -> Path:
        return self.root / "request.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def child_log(self) -> Path:
        return self.root / "child.log"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.txt"

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def ir_dump(self) -> Path:
        # torch_xla appends ".<ordinal>" to this path.
        return self.raw / "ir-dump.txt"

    def native_ir_dump_environment(self) -> dict[str, str]:
        """torch_xla's own IR dump, one block per sync (``XLA_SAVE_TENSORS_FILE``):
        for a run of known short length, a process xlacli does not start (the
        pytest plugin's test process), or a script run to its end that switches
        eager mode on before its first graph (set then by ``child/graph_ir.py``)."""
        return {"XLA_SAVE_TENSORS_FILE": str(self.ir_dump), "XLA_SAVE_TENSORS_FMT": "text"}

    @property
    def ir_dump_file(self) -> Path:
        """Where the child writes each new graph's IR (named as torch_xla's ordinal 0)."""
        return self.raw / (self.ir_dump.name + ".0")

    @property
    def debug_log(self) -> Path:
        return self.raw / "pt-xla-debug.txt"

    @property
    def xla_dump(self) -> Path:
        return self.raw / "xla-dump"

    @property
    def graphs(self) -> Path:
        return self.root / "graphs"

    def ir_dump_files(self) -> list[Path]:
        """The IR dump files torch_xla wrote, one per device ordinal."""
        return sorted(self.raw.glob(self.ir_dump.name + ".*"))
