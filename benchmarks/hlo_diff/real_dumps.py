"""Check diff-hlo's parser and matcher on real XLA dumps of varied architectures.

    PJRT_DEVICE=CPU python benchmarks/hlo_diff/real_dumps.py [--out DIR] [--only NAME ...]
        [--redump] [--jax-python PATH]

Dumps one training step (forward, loss, backward, AdamW, ``torch_xla.sync()``,
run twice) of each model with ``XLA_FLAGS=--xla_dump_to=DIR/NAME
--xla_dump_hlo_as_text`` and ``XLA_HLO_DEBUG=1``, in a child process per
model, one at a time: from ``transformers`` configs with random weights and
tiny sizes (nothing is downloaded) a Llama-style causal LM (``llama``, and
``llama_deep`` with 32 layers for a module over 30,000 instructions), a
Mixtral-style mixture of experts (``mixtral``), T5 (``t5``), BERT (``bert``),
ViT (``vit``) and ResNet (``resnet``; torchvision is not installed, so both
vision models come from transformers), and a Llama-style model with its
weights sharded over a 4-device CPU mesh (``llama_spmd``: partitioned HLO
with collectives). ``jax`` is a pure ``jax.numpy`` transformer step with
``lax.scan`` over layers and ``jax.checkpoint`` (while loops, remat),
dumped by XLA and by ``compile().as_text()``; it runs with the Python of a
separate venv holding jax (``python3 -m venv /tmp/jaxenv &&
/tmp/jaxenv/bin/pip install jax``) and is skipped when that is missing, as
are ``jax_ops`` (control flow, sorts, scatter, FFT, LAPACK custom calls,
narrow types, a host callback: see ``jax_ops.py``) and ``jax_spmd`` (a
sharded step on 4 host devices, Shardy annotations, a ``shard_map`` with
every collective).

Besides XLA's dump, each torch model writes its first step's pending graph
as ``torch_xla._XLAC._get_xla_tensors_hlo`` prints it (stage ``api``), and
each JAX program ``lower(...).as_text(dialect="hlo")`` (stage ``lowered``)
and ``compile().as_text()`` (stage ``as_text``).

Dumps already under ``DIR/NAME`` are reused unless ``--redump``. With
``--passes`` the main program is dumped after every HLO pass as well
(``--xla_dump_hlo_pass_re=.*``, stage ``passes``, about 100 files a model,
into ``DIR/NAME_passes``): the intermediate forms (sharding annotations
before partitioning, dead code before DCE, async collectives, layouts).

Then every HLO module found (``*before_optimizations.txt``,
``*after_optimizations.txt``, ``*.as_text.txt``, ``*.lowered.txt``,
``*.tensors_hlo.txt``, and the pass dumps) goes through xlacli: parse, print
and parse again (the same module), diff against itself, against a copy
renumbered and reordered on the typed model (``renumber`` and ``reorder`` of
``tests/unit/hlo/hlo_transforms.py``), and against a copy renamed on the
text (``make_inputs.rename``: every name new, computations shuffled). The
table shows the largest module of each model and stage, and every module
that failed a check; the exit status is 1 if any check failed.
Default DIR: ``benchmarks/.work/real_dumps``.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
WORK = HERE.parent / ".work" / "real_dumps"
STAGES = {
    "before": ".before_optimizations.txt",
    "after": "after_optimizations.txt",
    "as_text": ".as_text.txt",  # JAX: compile().as_text()
    "lowered": ".lowered.txt",  # JAX: lower().as_text(dialect="hlo")
    "api": ".tensors_hlo.txt",  # torch_xla: _XLAC._get_xla_tensors_hlo
}
STAGE_ORDER = ("api", "lowered", "before", "passes", "after", "as_text")  # the table's order
# With --xla_dump_hlo_pass_re: module_0000.NAME.0042.PIPELINE.after_PASS.before_PASS.txt
PASS_DUMP = re.compile(r"\.\d{4}\.[^/]*\.after_[^/]*\.txt$")
TORCH_MODELS = {
    "llama": ["llama"],
    "llama_deep": ["llama_deep", "--layers", "32"],
    "mixtral": ["mixtral"],
    "t5": ["t5"],
    "bert": ["bert"],
    "vit": ["vit"],
    "resnet": ["resnet"],
    "llama_spmd": ["llama_spmd"],
}
JAX_PROGRAMS = {  # run with the Python of the jax venv; the dump's own path is appended
    "jax": ["jax_step.py"],
    "jax_ops": ["jax_ops.py", "ops"],
    "jax_spmd": ["jax_ops.py", "spmd"],
}
MODELS = [*TORCH_MODELS, *JAX_PROGRAMS]
CHECKS = ("parse", "round-trip", "self", "renumbered", "renamed")


@dataclass
class Row:
    """The checks of one dumped module."""

    model: str
    stage: str
    path: Path
    instructions: int = 0
    parse_seconds: float = 0.0
    verdicts: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(verdict == "ok" for verdict in self.verdicts.values())


def dump(name: str, folder: Path, jax_python: Path, passes: bool) -> bool:
    """Run the model's step in a child process dumping into ``folder``; False when skipped."""
    flags = f"--xla_dump_to={folder} --xla_dump_hlo_as_text"
    if passes:  # the main program only: torch_xla's small helper graphs add nothing new
        flags += " --xla_dump_hlo_pass_re=.* --xla_dump_hlo_module_re=SyncTensorsGraph|jit_.*step"
    env = dict(os.environ, PJRT_DEVICE="CPU", XLA_HLO_DEBUG="1", XLA_FLAGS=flags)
    if name in JAX_PROGRAMS:
        if not jax_python.exists():
            print(f"{name}: skipped, no {jax_python} (see real_dumps.py)", file=sys.stderr)
            return False
        # Only the step: jax.random's small helper programs would crowd the table.
        env["XLA_FLAGS"] += " --xla_force_host_platform_device_count=4"
        if not passes:
            env["XLA_FLAGS"] += " --xla_dump_hlo_module_re=jit_.*step"
        script, *arguments = JAX_PROGRAMS[name]
        command = [str(jax_python), str(HERE / script), *arguments]
        command.append(str(folder / f"{name}.as_text.txt"))
    else:
        if name == "llama_spmd":
            env["CPU_NUM_DEVICES"] = "4"
        command = [sys.executable, str(HERE / "real_models.py"), *TORCH_MODELS[name]]
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, cwd=folder, stdout=sys.stderr)
    # XLA:CPU dumps LLVM IR, MLIR and object files beside the HLO: 90% of the bytes, unused.
    for path in folder.iterdir():
        if path.suffix in (".ll", ".mlir", ".o"):
            path.unlink()
    print(f"{name}: dumped in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return True


def dumped_modules(folder: Path) -> list[tuple[str, Path]]:
    """Every HLO text module of a dump folder, with its stage."""
    found = []
    for path in sorted(folder.iterdir()):
        stage = next((s for s, suffix in STAGES.items() if path.name.endswith(suffix)), None)
        if stage is None and PASS_DUMP.search(path.name):
            stage = "passes"
        if stage and "buffer-assignment" not in path.name:
            found.append((stage, path))
    return found


@functools.cache
def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(model: str, stage: str, path: Path) -> Row:
    """Parse one module and run every check on it; a check that raises fails with the error."""
    from xlacli.hlo import HloModule, parse_hlo, parse_hlo_file, print_module
    from xlacli.hlo.diff import diff_modules

    transforms = _load(ROOT / "tests" / "unit" / "hlo" / "hlo_transforms.py")
    make_inputs = _load(HERE / "make_inputs.py")
    row = Row(model, stage, path)
    started = time.perf_counter()
    try:
        module = parse_hlo_file(path)
    except Exception as error:
        row.verdicts["parse"] = _failure(error)
        return row
    row.parse_seconds = time.perf_counter() - started
    row.verdicts["parse"] = "ok"
    row.instructions = module.instruction_count

    def renumbered() -> HloModule:  # on the typed model
        return transforms.reorder(transforms.renumber(module, seed=1), seed=2)

    def renamed() -> HloModule:  # on the text: every name new, parsed again
        return parse_hlo(make_inputs.rename(path.read_text(), seed=4))

    checks: dict[str, Callable[[], bool]] = {
        "round-trip": lambda: parse_hlo(print_module(module), module.filename) == module,
        "self": lambda: diff_modules(module, module).identical,
        "renumbered": lambda: diff_modules(module, renumbered()).identical,
        "renamed": lambda: diff_modules(module, renamed()).identical,
    }
    for name, passes in checks.items():
        try:
            row.verdicts[name] = "ok" if passes() else "DIFFERS"
        except Exception as error:  # a crash is a verdict too: record it, run the next check
            row.verdicts[name] = _failure(error)
    return row


def _failure(error: Exception) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:90]}"


def shown(rows: list[Row]) -> list[Row]:
    """The largest module of each model and stage, and every failure."""
    largest: dict[tuple[str, str], Row] = {}
    for row in rows:
        key = (row.model, row.stage)
        if key not in largest or row.path.stat().st_size > largest[key].path.stat().st_size:
            largest[key] = row
    kept = [row for row in rows if row in largest.values() or not row.ok]
    order = list(STAGE_ORDER)
    return sorted(kept, key=lambda row: (MODELS.index(row.model), order.index(row.stage)))


def print_table(rows: list[Row]) -> None:
    header = ["model", "stage", "instructions", "MB", "parse s", *CHECKS]
    lines = [header]
    for row in shown(rows):
        size = f"{row.path.stat().st_size / 1e6:.2f}"
        cells = [row.model, row.stage, str(row.instructions), size, f"{row.parse_seconds:.2f}"]
        lines.append(cells + [row.verdicts.get(check, "-") for check in CHECKS])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for line in lines:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))
    failed = [row for row in rows if not row.ok]
    print(f"\n{len(rows)} modules checked, {len(failed)} with a failed check")
    for row in failed:
        print(f"  {row.model}/{row.path.name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=WORK, help=f"default: {WORK}")
    parser.add_argument("--only", nargs="*", choices=MODELS, default=MODELS)
    parser.add_argument("--redump", action="store_true", help="dump again even if DIR/NAME exists")
    parser.add_argument("--jax-python", type=Path, default=Path("/tmp/jaxenv/bin/python"))
    parser.add_argument(
        "--passes", action="store_true", help="dump after every HLO pass, into DIR/NAME_passes"
    )
    args = parser.parse_args()
    rows = []
    for name in args.only:
        folder = args.out / (f"{name}_passes" if args.passes else name)
        dumped = folder.is_dir() and dumped_modules(folder)
        if (args.redump or not dumped) and not dump(name, folder, args.jax_python, args.passes):
            continue
        rows += [check(name, stage, path) for stage, path in dumped_modules(folder)]
    print_table(rows)
    return 1 if any(not row.ok for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
