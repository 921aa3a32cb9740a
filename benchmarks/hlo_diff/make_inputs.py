"""Generate the diff-hlo benchmark inputs under benchmarks/.work/hlo_diff/.

    PJRT_DEVICE=CPU python benchmarks/hlo_diff/make_inputs.py

Compiles one GPT-2-like training step (12 layers, d_model 768, 12 heads,
sequence 128, AdamW, dropout) with torch_xla on CPU twice: as is, and with
layer 5's activation swapped (GELU -> ReLU). For both stages (before and
after XLA's optimizations) it keeps the largest module as ``base`` and
``one_layer``, and writes two transforms of ``base`` that change nothing a
program means: ``renumbered`` (every name gets a new, shuffled number) and
``reordered`` (the computations in a shuffled order), and the hard case
for a structural diff, ``renamed``: every name replaced (nothing matches by
name) and the computations reordered. With ``--large-layers N [N ...]`` it
also compiles an N-layer step for each N and writes ``layers<N>`` and
``layers<N>_renamed`` (4 layers make about 11,000 instructions after
optimization, 40 about 124,000), to measure how the time grows. Takes about a minute, plus one to
two minutes per --large-layers value.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE.parent / ".work" / "hlo_diff"
STAGES = {"before": "before_optimizations", "after": "cpu_after_optimizations"}
_DEFINED = re.compile(
    r"^\s*(?:ROOT\s+)?%([\w.\-]+) = |^(?:ENTRY\s+)?%([\w.\-]+) .*\{$", re.MULTILINE
)
_SUFFIX = re.compile(r"(\.\d+)+$")
_NAME = re.compile(r"%([\w.\-]+)|(?<=[(,] )([\w.\-]+)(?=: )|(?<=\()([\w.\-]+)(?=: )")


def compile_step(dump: Path, extra: list[str]) -> None:
    """Run one training step in a child process with HLO dumping on."""
    env = dict(
        os.environ,
        PJRT_DEVICE="CPU",
        XLA_HLO_DEBUG="1",
        XLA_FLAGS=f"--xla_dump_to={dump} --xla_dump_hlo_as_text "
        "--xla_dump_hlo_module_re=SyncTensorsGraph",
    )
    command = [sys.executable, str(HERE / "gpt2_step.py"), "--seq", "129", *extra]
    subprocess.run(command, env=env, check=True)


def largest(dump: Path, stage: str) -> str:
    """The text of the largest dumped module of a stage (the first, full training step)."""
    files = sorted(dump.glob(f"module_*.{STAGES[stage]}.txt"), key=lambda p: p.stat().st_size)
    if not files:
        raise SystemExit(f"no {STAGES[stage]} module in {dump}")
    return files[-1].read_text()


def renumber(text: str, seed: int) -> str:
    """Give every instruction and computation a new number, shuffled."""
    names = [a or b for a, b in _DEFINED.findall(text)]
    numbers = random.Random(seed).sample(range(10 * len(names)), len(names))
    mapping = {
        name: f"{_SUFFIX.sub('', name)}.{number}"
        for name, number in zip(names, numbers, strict=True)
    }

    def rename(match: re.Match[str]) -> str:
        if match.group(1):
            return "%" + mapping.get(match.group(1), match.group(1))
        name = match.group(2) or match.group(3)
        return mapping.get(name, name)

    # Metadata strings hold no % names, so a token pass over whole lines is safe.
    return _NAME.sub(rename, text)


def rename(text: str, seed: int) -> str:
    """Replace every name by a new one (``n<number>``), shuffled, and reorder the computations."""
    names = [a or b for a, b in _DEFINED.findall(text)]
    numbers = random.Random(seed).sample(range(10 * len(names)), len(names))
    mapping = {name: f"n{number}" for name, number in zip(names, numbers, strict=True)}

    def replace(match: re.Match[str]) -> str:
        if match.group(1):
            return "%" + mapping.get(match.group(1), match.group(1))
        name = match.group(2) or match.group(3)
        return mapping.get(name, name)

    return reorder(_NAME.sub(replace, text), seed)


def reorder(text: str, seed: int) -> str:
    """Shuffle the computations; the header and the preamble blocks stay first, in order."""
    blocks = text.rstrip("\n").split("\n\n")
    # A computation ends with a lone "}"; JAX's preamble (FileNames, StackFrames...) is
    # several blocks, each of whose lines end with "}" too, but never a lone one.
    first = next(i for i, block in enumerate(blocks) if block.endswith("\n}"))
    computations = blocks[first:]
    random.Random(seed).shuffle(computations)
    return "\n\n".join([*blocks[:first], *computations]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layer", type=int, default=5, help="the block whose activation changes")
    parser.add_argument("--clip", type=float, default=0.0, help="clip gradients (a bigger graph)")
    parser.add_argument("--out", type=Path, default=WORK, help=f"default: {WORK}")
    parser.add_argument(
        "--large-layers", type=int, nargs="*", default=[], help="also N-layer steps (growth)"
    )
    parser.add_argument("--skip-base", action="store_true", help="only the --large-layers pairs")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for layers in sorted(args.large_layers):
        with tempfile.TemporaryDirectory() as large_dump:
            compile_step(Path(large_dump), ["--layers", str(layers)])
            large = largest(Path(large_dump), "after")
        for name, text in (("", large), ("_renamed", rename(large, seed=3))):
            path = args.out / f"layers{layers}{name}.after.txt"
            path.write_text(text)
            print(f"{path}: {len(text) / 1e6:.1f} MB")
    if args.skip_base:
        return
    args.out.mkdir(parents=True, exist_ok=True)
    extra = ["--clip", str(args.clip)] if args.clip else []
    with tempfile.TemporaryDirectory() as base_dump, tempfile.TemporaryDirectory() as layer_dump:
        compile_step(Path(base_dump), extra)
        compile_step(Path(layer_dump), [*extra, "--relu-layer", str(args.layer)])
        for stage in STAGES:
            base = largest(Path(base_dump), stage)
            outputs = {
                "base": base,
                "one_layer": largest(Path(layer_dump), stage),
                "renumbered": renumber(base, seed=1),
                "reordered": reorder(base, seed=2),
                "renamed": rename(base, seed=4),
            }
            for name, text in outputs.items():
                path = args.out / f"{name}.{stage}.txt"
                path.write_text(text)
                print(f"{path}: {len(text) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
