"""Regenerate the torch_xla golden HLO files in this folder.

    PJRT_DEVICE=CPU python tests/assets/hlo/make_goldens.py

Each model variant runs once in its own child process with ``XLA_HLO_DEBUG=1``
and ``--xla_dump_to``; its one compiled graph is copied here as
``torch_<variant>.before_optimizations.txt`` and ``.after_optimizations.txt``.
The variants differ from ``mlp_relu`` by one change each: the activation
(``mlp_gelu``), one dimension (``mlp_wide``), one extra op (``mlp_extra``).
Inputs are made on the CPU and moved, so each graph holds only the model.
The tests never run this script (it needs torch_xla and seconds per model).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
VARIANTS = ("mlp_relu", "mlp_gelu", "mlp_wide", "mlp_extra", "mlp_train", "conv", "transformer")


class Doubler(nn.Module):
    """The one extra op of ``mlp_extra``."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def build(variant: str) -> tuple[nn.Module, torch.Tensor]:
    """The model of a variant and an example input (both on the CPU)."""
    torch.manual_seed(0)
    if variant.startswith("mlp"):
        hidden = 32 if variant == "mlp_wide" else 16
        activation = nn.GELU() if variant == "mlp_gelu" else nn.ReLU()
        layers = [nn.Linear(8, hidden), activation, nn.Linear(hidden, 4)]
        if variant == "mlp_extra":
            layers.insert(2, Doubler())
        return nn.Sequential(*layers), torch.randn(2, 8)
    if variant == "conv":
        model = nn.Sequential(
            nn.Conv2d(3, 4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(4 * 4 * 4, 10),
        )
        return model, torch.randn(2, 3, 8, 8)
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
    return layer, torch.randn(1, 4, 16)


def run_child(variant: str) -> None:
    """Trace one step of a variant on the XLA device and sync (in the child)."""
    import torch_xla

    device = torch_xla.device()
    model, example = build(variant)
    model = model.to(device)
    inputs = example.to(device)
    if variant == "mlp_train":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        output = model(inputs).pow(2).mean()
        output.backward()
        optimizer.step()
    else:
        with torch.no_grad():
            output = model(inputs)
    torch_xla.sync()  # compiles the graph of every live tensor: output (and new weights)
    output.cpu()


def dump_variant(
    variant: str, dump: str, flags: str = "--xla_dump_hlo_as_text", script: str = __file__
) -> None:
    """Run a variant in a child process (``script --child variant``) that dumps into ``dump``."""
    env = dict(
        os.environ, PJRT_DEVICE="CPU", XLA_HLO_DEBUG="1", XLA_FLAGS=f"--xla_dump_to={dump} {flags}"
    )
    subprocess.run([sys.executable, script, "--child", variant], env=env, check=True)


def capture(variant: str) -> None:
    """Run a variant in a child process and copy its dumped graph here."""
    with tempfile.TemporaryDirectory() as dump:
        dump_variant(variant, dump)
        for stage in ("before_optimizations", "after_optimizations"):
            found = sorted(Path(dump).glob(f"module_*.{stage}.txt")) or sorted(
                Path(dump).glob(f"module_*.cpu_{stage}.txt")
            )
            if len(found) != 1:
                raise SystemExit(f"{variant}: expected one {stage} graph, found {len(found)}")
            target = HERE / f"torch_{variant}.{stage}.txt"
            shutil.copyfile(found[0], target)
            print(f"{target.name}: {target.stat().st_size} bytes")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        run_child(sys.argv[2])
    else:
        for name in sys.argv[1:] or VARIANTS:
            capture(name)
